/*
 * service_limits.h - the one place that owns limits: every default, with the
 * reason for its value.  Each is a flag and an environment variable (see
 * config.c).
 */
#ifndef SERVER_SERVICE_LIMITS_H
#define SERVER_SERVICE_LIMITS_H

#include <stddef.h>

/* 16 MiB of JSON is about 1 M numbers written at full precision, more than a
 * (1024 × 512) input with four 512 × 512 projections.  Decoding a body holds
 * several times its size besides (server/base/parse_budget.h reserves it;
 * docs/reliability.md, "What parsing holds", has the figures). */
#define LIMIT_DEFAULT_MAX_BODY ((size_t)16 << 20)

/* Tokens (n or m): 8192 keeps an (h, n, m) float64 weights tensor for h = 1 at
 * 512 MiB, the largest one request may hold by default (below). */
#define LIMIT_DEFAULT_MAX_TOKENS 8192
/* Widths d, d_c, h·d_k, h·d_v, d_out: 8192 is above every published model. */
#define LIMIT_DEFAULT_MAX_WIDTH 8192
/* Heads: 128 is above every published model (GPT-3 uses 96). */
#define LIMIT_DEFAULT_MAX_HEADS 128
/* Numbers in one request body (all tensors together): 4 M numbers is about
 * 40 MB of JSON at full precision, above the default body cap anyway. */
#define LIMIT_DEFAULT_MAX_ELEMENTS ((size_t)4 << 20)
/* Memory one request may need for its inputs, every stage it keeps and its
 * reply, computed before anything is allocated. */
#define LIMIT_DEFAULT_MAX_REQUEST_MEMORY ((size_t)1 << 30)
/* Memory all in-flight requests may hold together: a quarter of a 24 GiB
 * machine, leaving the rest to the OS and other replicas. */
#define LIMIT_DEFAULT_MEMORY_BUDGET ((size_t)4 << 30)
/* Requests waiting for a worker: beyond this the server answers 503 with
 * Retry-After at once instead of letting latency grow without bound. */
#define LIMIT_DEFAULT_MAX_QUEUE 256
/* Open connections in all and per client address. */
#define LIMIT_DEFAULT_MAX_CONNECTIONS 1024
#define LIMIT_DEFAULT_MAX_CONNECTIONS_PER_IP 64
/* Seconds a connection may sit idle (no bytes) before it is closed. */
#define LIMIT_DEFAULT_IDLE_TIMEOUT 15
/* Seconds a whole request may take to arrive: a client sending one byte a
 * second cannot hold a connection for longer than this. */
#define LIMIT_DEFAULT_REQUEST_TIMEOUT 30
/* Bytes a second a client must at least read its reply at, on average: a
 * reply must be read within --request-timeout plus its size at this rate,
 * or the connection is closed and the reply's memory, which the budget
 * counts until then, is freed.  1 MiB/s is a slow mobile link; a 90 MB
 * reply then gets two minutes. */
#define LIMIT_DEFAULT_MIN_SEND_RATE ((size_t)1 << 20)
/* Seconds a computation may take, from its request's arrival (its time in
 * the queue counts): past it the computation is stopped and answered 503
 * compute_timeout, and its worker is free at once.  30 s is what a
 * balancer or a client waits by default (nginx's proxy_read_timeout is
 * 60 s, a browser's fetch has none); a request that needs longer is too
 * big for one replica anyway. */
#define LIMIT_DEFAULT_COMPUTE_TIMEOUT 30
/* Seconds SIGTERM waits for in-flight requests before exiting. */
#define LIMIT_DEFAULT_GRACE 20

/* The fast lane (server/http/lanes.c): a request whose body is at most
 * LIMIT_FAST_LANE_MAX_BODY bytes, and whose work once decoded is at most
 * LIMIT_FAST_LANE_MAX_FLOPS (api_attention_work(): its floating-point
 * operations, its reply's numbers counted as operations), is decoded,
 * computed and answered on the event thread that received it; the rest go
 * to the workers.  Both keep what an event thread spends on one request
 * near what handing it to a worker makes it wait (make bench-lanes; its
 * figures for both are in docs/performance.md: n 32, d 4, counted at
 * 3,001,856, its JSON reply's numbers at 2,500 each, takes about 50 µs). */
#define LIMIT_FAST_LANE_MAX_BODY ((size_t)16 << 10)
#define LIMIT_FAST_LANE_MAX_FLOPS 3.2e6

/* The work (api_attention_work(): operations, the slow ones counted more)
 * one core computes a second, narrow heads or wide, as measured on these
 * machines (docs/performance.md, "The work estimate").  --max-work's
 * default is what one core computes in --compute-timeout at this rate: a
 * request over it could not finish in time even with the machine to
 * itself on one core, and is refused before it runs (413) instead of
 * holding the workers until its deadline. */
#define LIMIT_WORK_PER_CORE_SECOND 2e10

/* Per-request shape limits, used by the decoder. */
typedef struct {
    size_t max_tokens;
    size_t max_width;
    size_t max_heads;
    size_t max_elements;
    size_t max_request_memory;
    double max_work; /* api_attention_work() at most; 0: no cap */
} request_limits;

#endif
