/*
 * daemon.h - the libmicrohttpd daemon: request lifecycle, routes, suspend and
 * resume around pool jobs, draining on shutdown.
 */
#ifndef SERVER_HTTP_H
#define SERVER_HTTP_H

#include "core/pool.h"
#include "server/setup/config.h"

#include <stdbool.h>

typedef struct http_server http_server;

/* Starts serving cfg->host:cfg->port (port 0: any free port).  Both cfg and
 * workers must outlive the server.  NULL on failure, with a message in err. */
http_server *http_start(const config *cfg, pool *workers, char *err,
                        size_t err_size);

/* The port actually bound. */
unsigned http_port(const http_server *srv);

/* Whether no request is in flight; *completed is set to the number of
 * requests completed so far, so a caller can tell a quiet spell from a
 * busy one. */
bool http_idle(http_server *srv, unsigned long long *completed);

/* Stops accepting connections; /readyz answers 503 from now on. */
void http_begin_drain(http_server *srv);

/* Stops every computation: those running leave their pass within a block
 * of work, those queued do not start, and each is answered 503 draining. */
void http_cancel_all(http_server *srv);

/* Waits until no request is in progress (every reply sent, or its
 * connection closed) or `seconds` pass; true if idle. */
bool http_wait_idle(http_server *srv, double seconds);

/* Stops the daemon and frees srv.  Call after every job has resumed its
 * connection (http_wait_idle() returned true, or the pool was destroyed). */
void http_stop(http_server *srv);

#endif
