/*
 * conn_deadline.h - a whole-request deadline for every connection.
 *
 * libmicrohttpd's timeout is an idle timeout: a client that sends one byte of
 * headers or body every few seconds is never idle and could hold a connection
 * slot forever (slowloris, slow body), and one that reads a byte of its reply
 * every few seconds holds the reply's memory as long.  This module watches
 * each connection from the moment it opens (or its previous reply completed)
 * until its request has fully arrived, and again while its reply is sent;
 * past a deadline a watcher thread shuts the socket down, and libmicrohttpd
 * then closes the connection on its own thread as if the client had gone
 * away.
 */
#ifndef SERVER_CONN_DEADLINE_H
#define SERVER_CONN_DEADLINE_H

#include <stdbool.h>

typedef struct conn_deadlines conn_deadlines;
typedef struct conn_watch conn_watch;

/* Starts the watcher; NULL on failure. */
conn_deadlines *conn_deadlines_start(unsigned timeout_seconds);
void conn_deadlines_stop(conn_deadlines *cd);

/* A connection opened on socket fd: watched (armed) from now.  Returns its
 * handle, or NULL when out of memory (the connection is then not watched). */
conn_watch *conn_deadlines_open(conn_deadlines *cd, int fd);
/* Its request has fully arrived: stop the clock. */
void conn_deadlines_disarm(conn_deadlines *cd, conn_watch *w);
/* Its reply was queued: it must be sent within `seconds` from now. */
void conn_deadlines_sending(conn_deadlines *cd, conn_watch *w, double seconds);
/* Its reply is complete: the clock starts again for the next request. */
void conn_deadlines_rearm(conn_deadlines *cd, conn_watch *w);
/* The connection is closing: forget it (before its socket is closed). */
void conn_deadlines_close(conn_deadlines *cd, conn_watch *w);

/* Connections shut down by the watcher so far. */
unsigned long long conn_deadlines_expired(conn_deadlines *cd);

#endif
