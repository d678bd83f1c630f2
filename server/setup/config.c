/*
 * config.c - one table of options drives parsing, the environment and --help.
 */
#include "server/setup/config.h"

#include <cblas.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef enum { OPT_SIZE, OPT_UINT, OPT_LISTEN, OPT_STRING, OPT_BOOL } opt_kind;

typedef struct {
    const char *name;
    opt_kind kind;
    size_t offset, string_size;
    const char *help;
} option_spec;

#define FIELD(f) offsetof(config, f)

static const option_spec options[] = {
    {"listen", OPT_LISTEN, 0, 0,
     "HOST:PORT to serve on (default 127.0.0.1:8080)"},
    {"threads", OPT_SIZE, FIELD(threads), 0,
     "worker threads (default: online CPUs)"},
    {"max-body", OPT_SIZE, FIELD(max_body), 0,
     "largest request body in bytes (default 16 MiB)"},
    {"max-tokens", OPT_SIZE, FIELD(request.max_tokens), 0,
     "largest n or m (default 8192)"},
    {"max-width", OPT_SIZE, FIELD(request.max_width), 0,
     "largest d, d_c, h*d_k, h*d_v or d_out (default 8192)"},
    {"max-heads", OPT_SIZE, FIELD(request.max_heads), 0,
     "largest num_heads (default 128)"},
    {"max-elements", OPT_SIZE, FIELD(request.max_elements), 0,
     "most numbers in one request (default 4194304)"},
    {"max-request-memory", OPT_SIZE, FIELD(request.max_request_memory), 0,
     "bytes one request may need to compute (default 1 GiB)"},
    {"memory-budget", OPT_SIZE, FIELD(memory_budget), 0,
     "bytes all in-flight requests may hold (default 4 GiB)"},
    {"max-queue", OPT_SIZE, FIELD(max_queue), 0,
     "requests waiting for a worker before 503 (default 256)"},
    {"max-connections", OPT_UINT, FIELD(max_connections), 0,
     "open connections in all (default 1024)"},
    {"max-connections-per-ip", OPT_UINT, FIELD(max_connections_per_ip), 0,
     "open connections per client address (default 64)"},
    {"idle-timeout", OPT_UINT, FIELD(idle_timeout), 0,
     "seconds a silent connection stays open (default 15)"},
    {"request-timeout", OPT_UINT, FIELD(request_timeout), 0,
     "seconds a request may take to arrive (default 30)"},
    {"grace", OPT_UINT, FIELD(grace), 0,
     "seconds SIGTERM waits for in-flight requests (default 20)"},
    {"api-key-file", OPT_STRING, FIELD(api_key_file),
     sizeof(((config *)0)->api_key_file),
     "file holding the bearer token required on /v1 (default: none)"},
    {"cors-origins", OPT_STRING, FIELD(cors_origins),
     sizeof(((config *)0)->cors_origins),
     "comma-separated origins allowed by CORS, or * (default *)"},
    {"access-log", OPT_BOOL, FIELD(access_log), 0,
     "one JSON line per request on stderr: on or off (default on)"},
    {"spread-loops", OPT_BOOL, FIELD(spread_loops), 0,
     "a parallel loop's helpers leave its caller's CPU: on or off (default "
     "on)"},
};

#define OPTION_COUNT (sizeof options / sizeof *options)

/* "max-body" → "ATTENTION_MAX_BODY" */
static void env_name(const option_spec *opt, char *env, size_t size)
{
    size_t len = (size_t)snprintf(env, size, "ATTENTION_");
    for (const char *c = opt->name; *c && len < size - 1; c++)
        env[len++] = *c == '-' ? '_' : (char)(*c - 'a' + 'A');
    env[len] = '\0';
}

static void print_help(FILE *out, const char *argv0)
{
    fprintf(out,
            "Usage: %s [OPTIONS]\n"
            "Serves transformer attention over HTTP (POST /v1/attention).\n\n",
            argv0);
    for (size_t i = 0; i < OPTION_COUNT; i++) {
        char env[64];
        env_name(&options[i], env, sizeof env);
        fprintf(out, "  --%-24s %s\n  %-26s env %s\n", options[i].name,
                options[i].help, "", env);
    }
    fprintf(out, "  --%-24s %s\n  --%-24s %s\n", "help", "this text", "version",
            "print the version and the BLAS in use");
}

static bool parse_size(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    if (!*s || *s == '-')
        return false;
    unsigned long long v = strtoull(s, &end, 10);
    unsigned long long mult = 1;
    if (*end == 'K' || *end == 'k')
        mult = 1ull << 10, end++;
    else if (*end == 'M' || *end == 'm')
        mult = 1ull << 20, end++;
    else if (*end == 'G' || *end == 'g')
        mult = 1ull << 30, end++;
    if (errno || *end || v > SIZE_MAX / mult)
        return false;
    *out = (size_t)(v * mult);
    return true;
}

static bool set_option(config *cfg, const option_spec *opt, const char *value)
{
    char *field = (char *)cfg + opt->offset;
    size_t size;
    switch (opt->kind) {
    case OPT_SIZE:
        if (!parse_size(value, &size) || size == 0)
            return false;
        memcpy(field, &size, sizeof size);
        return true;
    case OPT_UINT: {
        if (!parse_size(value, &size) || size > 1000000)
            return false;
        unsigned u = (unsigned)size;
        memcpy(field, &u, sizeof u);
        return true;
    }
    case OPT_BOOL: {
        bool on = strcmp(value, "on") == 0 || strcmp(value, "true") == 0 ||
                  strcmp(value, "1") == 0;
        bool off = strcmp(value, "off") == 0 || strcmp(value, "false") == 0 ||
                   strcmp(value, "0") == 0;
        if (!on && !off)
            return false;
        memcpy(field, &on, sizeof on);
        return true;
    }
    case OPT_STRING:
        if (strlen(value) >= opt->string_size)
            return false;
        strcpy(field, value);
        return true;
    case OPT_LISTEN: {
        const char *colon = strrchr(value, ':');
        if (!colon || (size_t)(colon - value) >= sizeof cfg->host ||
            !parse_size(colon + 1, &size) || size > 65535)
            return false;
        memcpy(cfg->host, value, (size_t)(colon - value));
        cfg->host[colon - value] = '\0';
        cfg->port = (unsigned)size;
        return true;
    }
    }
    return false;
}

static void set_defaults(config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    strcpy(cfg->host, "127.0.0.1");
    cfg->port = 8080;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    cfg->threads = cpus > 0 ? (size_t)cpus : 1;
    cfg->max_body = LIMIT_DEFAULT_MAX_BODY;
    cfg->request.max_tokens = LIMIT_DEFAULT_MAX_TOKENS;
    cfg->request.max_width = LIMIT_DEFAULT_MAX_WIDTH;
    cfg->request.max_heads = LIMIT_DEFAULT_MAX_HEADS;
    cfg->request.max_elements = LIMIT_DEFAULT_MAX_ELEMENTS;
    cfg->request.max_request_memory = LIMIT_DEFAULT_MAX_REQUEST_MEMORY;
    cfg->memory_budget = LIMIT_DEFAULT_MEMORY_BUDGET;
    cfg->max_queue = LIMIT_DEFAULT_MAX_QUEUE;
    cfg->max_connections = LIMIT_DEFAULT_MAX_CONNECTIONS;
    cfg->max_connections_per_ip = LIMIT_DEFAULT_MAX_CONNECTIONS_PER_IP;
    cfg->idle_timeout = LIMIT_DEFAULT_IDLE_TIMEOUT;
    cfg->request_timeout = LIMIT_DEFAULT_REQUEST_TIMEOUT;
    cfg->grace = LIMIT_DEFAULT_GRACE;
    strcpy(cfg->cors_origins, "*");
    cfg->access_log = true;
    cfg->spread_loops = true;
}

config_action config_parse(config *cfg, int argc, char **argv)
{
    set_defaults(cfg);
    for (size_t i = 0; i < OPTION_COUNT; i++) {
        char env[64];
        env_name(&options[i], env, sizeof env);
        const char *value = getenv(env);
        if (value && !set_option(cfg, &options[i], value)) {
            fprintf(stderr, "invalid value for %s: %s\n", env, value);
            return CONFIG_EXIT_ERROR;
        }
    }
    struct option long_options[OPTION_COUNT + 3];
    for (size_t i = 0; i < OPTION_COUNT; i++)
        long_options[i] = (struct option){options[i].name, required_argument,
                                          NULL, (int)(i + 1)};
    long_options[OPTION_COUNT] =
        (struct option){"help", no_argument, NULL, 'h'};
    long_options[OPTION_COUNT + 1] =
        (struct option){"version", no_argument, NULL, 'V'};
    long_options[OPTION_COUNT + 2] = (struct option){0};
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "hV", long_options, NULL)) != -1) {
        if (c == 'h') {
            print_help(stdout, argv[0]);
            return CONFIG_EXIT_OK;
        }
        if (c == 'V') {
            printf("attention-server %s\nBLAS: OpenBLAS %s, core %s\n",
                   CONFIG_VERSION, openblas_get_config(),
                   openblas_get_corename());
            return CONFIG_EXIT_OK;
        }
        if (c < 1 || (size_t)c > OPTION_COUNT) {
            fprintf(stderr, "try --help\n");
            return CONFIG_EXIT_ERROR;
        }
        if (!set_option(cfg, &options[c - 1], optarg)) {
            fprintf(stderr, "invalid value for --%s: %s\n", options[c - 1].name,
                    optarg);
            return CONFIG_EXIT_ERROR;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "unexpected argument: %s (try --help)\n", argv[optind]);
        return CONFIG_EXIT_ERROR;
    }
    return CONFIG_RUN;
}
