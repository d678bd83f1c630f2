/*
 * config.h - the server's configuration: flags, each with an environment
 * variable of the same name (ATTENTION_ + upper case, '-' → '_'); a flag wins
 * over its variable, which wins over the default in service_limits.h.
 */
#ifndef SERVER_CONFIG_H
#define SERVER_CONFIG_H

#include "core/arch.h"
#include "server/base/service_limits.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define CONFIG_VERSION "1.0.0"

/* Which requests the fast lane answers on the event thread that received
 * them (server/http/daemon.c); the rest go to the pool. */
typedef enum {
    CONFIG_LANE_AUTO, /* small ones: under LIMIT_FAST_LANE_MAX_* */
    CONFIG_LANE_OFF,  /* none: every request goes to the pool */
    CONFIG_LANE_ALL,  /* all of them (tests: both lanes answer alike) */
} config_lane;

typedef struct {
    char host[256];
    unsigned port;
    size_t threads;
    size_t event_threads; /* libmicrohttpd's, one per CPU */
    config_lane fast_lane;
    size_t max_body;
    request_limits request;
    size_t memory_budget;
    size_t max_queue;
    unsigned max_connections;
    unsigned max_connections_per_ip;
    unsigned idle_timeout;
    unsigned request_timeout;
    size_t min_send_rate;     /* bytes a second a reply must be read at */
    unsigned compute_timeout; /* seconds, 0: none */
    unsigned grace;
    char api_key_file[4096];
    char cors_origins[4096];
    char frame_ancestors[1024]; /* CSP frame-ancestors of GET /embed */
    bool access_log;
    bool spread_loops;      /* helpers leave the loop caller's CPU (pool.h) */
    bool pin_event_threads; /* one CPU each, in turn (cpu_pin.h) */
    arch_simd kernels;      /* the most the core's own code may use (arch.h) */
} config;

typedef enum { CONFIG_RUN, CONFIG_EXIT_OK, CONFIG_EXIT_ERROR } config_action;

/* Fills cfg from defaults, environment and argv.  Prints --help/--version
 * or an error to the given streams and says whether to run. */
config_action config_parse(config *cfg, int argc, char **argv);

/* docs/reliability.md's table of limits, from the table of options that
 * set_defaults() and --help read: each limit's flag, its default and what
 * lies beyond it (tools/gen_contract.c writes it into the page). */
void config_print_limits(FILE *out);

#endif
