/*
 * access_log.c - request and event lines, batched off the request path.
 *
 * DESIGN
 * A thread that logs formats its line on its own stack, then copies it into
 * `fill` under one mutex.  The writer thread sleeps on a condition until
 * `fill` holds a line, then waits until the oldest line is
 * ACCESS_LOG_FLUSH_MS old, `fill` holds ACCESS_LOG_BATCH_BYTES, or someone
 * asks for a flush; it swaps `fill` with its spare buffer and writes the
 * batch with write() outside the lock, so the next lines collect while it
 * writes.  A line is never split between writes and never dropped: when
 * `fill` has no room (stderr is slower than the requests), the logging
 * thread waits for the writer, as it would have waited in write().  Only
 * the first line of a batch and a full batch wake the writer.
 */
#include "server/obs/access_log.h"

#include "server/base/buf.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Bytes of lines that make a batch worth writing at once: about 200 lines,
 * so at 50,000 requests a second the log costs some 250 writes a second. */
#define ACCESS_LOG_BATCH_BYTES ((size_t)64 << 10)
/* Bytes one buffer holds: lines that arrive while the previous batch is
 * being written wait here; past it the logging thread waits for stderr. */
#define ACCESS_LOG_BUFFER_BYTES ((size_t)1 << 20)
/* The longest line: the request id, method and path are bounded (64, 16
 * and 128 bytes, each at most 6 bytes per byte escaped), the numbers are
 * 20 digits each. */
#define ACCESS_LOG_LINE_MAX 2048

static atomic_bool requests_on = true;

static struct {
    pthread_mutex_t lock;
    pthread_cond_t wake;    /* the writer: a first line, a batch, a flush */
    pthread_cond_t written; /* waiters: room in `fill`, a flush done */
    char *fill;             /* lines collecting, `len` bytes of them */
    size_t len;
    char *spare;             /* the writer's other buffer */
    struct timespec first;   /* when the oldest line of `fill` came */
    unsigned long long seen; /* bytes logged so far */
    unsigned long long done; /* bytes of them written */
    unsigned long long want; /* a flush waits until done reaches this */
    bool running, stopping, conds_ready;
    pthread_t thread;
} L = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* write() until every byte is out or stderr fails for good. */
static void write_all(const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = write(STDERR_FILENO, data, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return; /* stderr closed or broken: nothing more can be done */
        data += n;
        len -= (size_t)n;
    }
}

static bool batch_due(const struct timespec *now)
{
    long long age_ns =
        (long long)(now->tv_sec - L.first.tv_sec) * 1000000000LL +
        (now->tv_nsec - L.first.tv_nsec);
    return L.stopping || L.len >= ACCESS_LOG_BATCH_BYTES || L.want > L.done ||
           age_ns >= (long long)ACCESS_LOG_FLUSH_MS * 1000000LL;
}

static void *writer_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&L.lock);
    for (;;) {
        while (L.len == 0 && !L.stopping)
            pthread_cond_wait(&L.wake, &L.lock);
        if (L.len == 0)
            break; /* stopping, nothing left */
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (!batch_due(&now)) {
            struct timespec due = L.first;
            due.tv_nsec += (long)ACCESS_LOG_FLUSH_MS * 1000000L;
            due.tv_sec += due.tv_nsec / 1000000000L;
            due.tv_nsec %= 1000000000L;
            pthread_cond_timedwait(&L.wake, &L.lock, &due);
            continue;
        }
        char *batch = L.fill;
        size_t len = L.len;
        L.fill = L.spare;
        L.spare = NULL;
        L.len = 0;
        pthread_cond_broadcast(&L.written); /* room in `fill` again */
        pthread_mutex_unlock(&L.lock);
        write_all(batch, len);
        pthread_mutex_lock(&L.lock);
        L.spare = batch;
        L.done += len;
        pthread_cond_broadcast(&L.written);
    }
    pthread_mutex_unlock(&L.lock);
    return NULL;
}

/* Copies one line (newline included) for the writer, or writes it now when
 * there is no writer. */
static void append_line(const char *line, size_t len)
{
    pthread_mutex_lock(&L.lock);
    if (!L.running) {
        write_all(line, len); /* under the lock: whole lines, in order */
        L.seen += len;
        L.done += len;
        pthread_mutex_unlock(&L.lock);
        return;
    }
    while (L.running && L.len + len > ACCESS_LOG_BUFFER_BYTES && L.len > 0) {
        pthread_cond_signal(&L.wake);
        pthread_cond_wait(&L.written, &L.lock);
    }
    if (!L.running) { /* stopped while this thread waited */
        write_all(line, len);
        pthread_mutex_unlock(&L.lock);
        return;
    }
    if (L.len == 0) {
        clock_gettime(CLOCK_MONOTONIC, &L.first);
        pthread_cond_signal(&L.wake); /* the writer starts its clock */
    }
    memcpy(L.fill + L.len, line, len);
    L.len += len;
    L.seen += len;
    if (L.len >= ACCESS_LOG_BATCH_BYTES && L.len - len < ACCESS_LOG_BATCH_BYTES)
        pthread_cond_signal(&L.wake);
    pthread_mutex_unlock(&L.lock);
}

void access_log_start(bool requests)
{
    atomic_store(&requests_on, requests);
    pthread_mutex_lock(&L.lock);
    if (L.running) {
        pthread_mutex_unlock(&L.lock);
        return;
    }
    if (!L.conds_ready) { /* once: a thread may still wait on them */
        pthread_condattr_t attr;
        pthread_condattr_init(&attr);
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
        pthread_cond_init(&L.wake, &attr);
        pthread_cond_init(&L.written, NULL);
        pthread_condattr_destroy(&attr);
        L.conds_ready = true;
    }
    L.fill = malloc(ACCESS_LOG_BUFFER_BYTES);
    L.spare = malloc(ACCESS_LOG_BUFFER_BYTES);
    L.stopping = false;
    L.running = L.fill && L.spare &&
                pthread_create(&L.thread, NULL, writer_main, NULL) == 0;
    if (!L.running) { /* lines are written as they come */
        free(L.fill);
        free(L.spare);
        L.fill = L.spare = NULL;
    }
    pthread_mutex_unlock(&L.lock);
}

void access_log_flush(void)
{
    pthread_mutex_lock(&L.lock);
    if (L.running) {
        unsigned long long target = L.seen;
        if (L.want < target)
            L.want = target;
        pthread_cond_signal(&L.wake);
        while (L.done < target)
            pthread_cond_wait(&L.written, &L.lock);
    }
    pthread_mutex_unlock(&L.lock);
}

void access_log_stop(void)
{
    pthread_mutex_lock(&L.lock);
    if (!L.running) {
        pthread_mutex_unlock(&L.lock);
        return;
    }
    L.stopping = true;
    pthread_cond_signal(&L.wake);
    pthread_mutex_unlock(&L.lock);
    pthread_join(L.thread, NULL); /* it writes every line before it ends */
    pthread_mutex_lock(&L.lock);
    L.running = false;
    free(L.fill);
    free(L.spare);
    L.fill = L.spare = NULL;
    pthread_cond_broadcast(&L.written); /* a waiter writes its own line */
    pthread_mutex_unlock(&L.lock);
}

void access_log_event(const char *json)
{
    char line[ACCESS_LOG_LINE_MAX];
    size_t len = strlen(json);
    if (len > sizeof line - 1)
        len = sizeof line - 1; /* events are short; never split a line */
    memcpy(line, json, len);
    line[len++] = '\n';
    append_line(line, len);
}

/* "2026-11-29T07:01:22" for the current second: strftime() once a second
 * per thread, not once a request. */
static const char *second_text(time_t second)
{
    static _Thread_local time_t cached_second = -1;
    static _Thread_local char cached[24];
    if (second != cached_second) {
        struct tm tm;
        gmtime_r(&second, &tm);
        strftime(cached, sizeof cached, "%Y-%m-%dT%H:%M:%S", &tm);
        cached_second = second;
    }
    return cached;
}

/* Milliseconds with three decimals, without printf (this runs per request). */
static void put_ms(buf *line, const char *key, double seconds)
{
    unsigned long long us = (unsigned long long)(seconds * 1e6 + 0.5);
    buf_puts(line, key);
    buf_uint(line, (size_t)(us / 1000));
    char frac[5] = {'.', (char)('0' + us / 100 % 10),
                    (char)('0' + us / 10 % 10), (char)('0' + us % 10), 0};
    buf_append(line, frac, 4);
}

/* A string field, when there is one. */
static void put_text(buf *line, const char *key, const char *value)
{
    if (!value)
        return;
    buf_puts(line, key);
    buf_json_string(line, value);
}

/* A client's text, when there is one: its first ACCESS_LOG_AGENT_MAX
 * bytes, ASCII only (a byte beyond it, obs-text or UTF-8 cut anywhere,
 * would make the line something a JSON reader refuses). */
static void put_ascii(buf *line, const char *key, const char *value)
{
    if (!value)
        return;
    char text[ACCESS_LOG_AGENT_MAX + 1];
    size_t len = 0;
    for (; value[len] && len < ACCESS_LOG_AGENT_MAX; len++) {
        unsigned char c = (unsigned char)value[len];
        text[len] = c < 0x7f ? (char)c : '?';
    }
    text[len] = '\0';
    put_text(line, key, text);
}

static void put_size(buf *line, const char *key, size_t value)
{
    buf_puts(line, key);
    buf_uint(line, value);
}

void access_log_write(const access_log_entry *e)
{
    if (!atomic_load(&requests_on))
        return;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    char storage[512];
    buf line = {.data = storage, .cap = sizeof storage, .borrowed = true};
    buf_puts(&line, "{\"time\":\"");
    buf_puts(&line, second_text(now.tv_sec));
    char millis[6] = {'.',
                      (char)('0' + now.tv_nsec / 100000000 % 10),
                      (char)('0' + now.tv_nsec / 10000000 % 10),
                      (char)('0' + now.tv_nsec / 1000000 % 10),
                      'Z',
                      0};
    buf_puts(&line, millis);
    buf_puts(&line, "\",\"request_id\":");
    buf_json_string(&line, e->id);
    put_text(&line, ",\"request_id_replaced\":", e->id_replaced);
    put_text(&line, ",\"trace_id\":", e->trace_id);
    put_text(&line, ",\"span_id\":", e->span_id);
    if (e->parent_id && e->parent_id[0])
        put_text(&line, ",\"parent_id\":", e->parent_id);
    put_text(&line, ",\"traceparent_ignored\":", e->traceparent_ignored);
    put_text(&line, ",\"tracestate_ignored\":", e->tracestate_ignored);
    put_ascii(&line, ",\"infer_id\":", e->infer_id);
    buf_puts(&line, ",\"method\":");
    buf_json_string(&line, e->method);
    buf_puts(&line, ",\"path\":");
    buf_json_string(&line, e->path);
    put_size(&line, ",\"status\":", e->status);
    if (e->code) {
        buf_puts(&line, ",\"code\":");
        buf_json_string(&line, e->code);
    }
    if (e->client) {
        buf_puts(&line, ",\"client\":");
        buf_json_string(&line, e->client);
    }
    put_ascii(&line, ",\"user_agent\":", e->user_agent);
    buf_puts(&line,
             e->completed ? ",\"completed\":true" : ",\"completed\":false");
    put_size(&line, ",\"bytes_in\":", e->bytes_in);
    put_size(&line, ",\"bytes_out\":", e->bytes_out);
    put_ms(&line, ",\"queue_ms\":", e->queue_seconds);
    put_ms(&line, ",\"work_ms\":", e->work_seconds);
    put_ms(&line, ",\"compute_ms\":", e->compute_seconds);
    put_ms(&line, ",\"encode_ms\":", e->encode_seconds);
    put_ms(&line, ",\"total_ms\":", e->total_seconds);
    if (e->lane) {
        buf_puts(&line, ",\"lane\":");
        buf_json_string(&line, e->lane);
    }
    if (e->stopped) {
        buf_puts(&line, ",\"stopped\":");
        buf_json_string(&line, e->stopped);
    }
    if (e->heads) {
        put_size(&line, ",\"n\":", e->n);
        put_size(&line, ",\"d\":", e->d);
        put_size(&line, ",\"h\":", e->heads);
        put_size(&line, ",\"work_flops\":",
                 e->work < 1e18 ? (size_t)e->work : (size_t)1e18);
    }
    buf_puts(&line, "}\n");
    if (!buf_failed(&line))
        append_line(line.data, line.len);
    buf_free(&line);
}
