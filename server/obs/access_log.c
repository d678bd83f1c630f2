#include "server/obs/access_log.h"

#include "server/base/buf.h"

#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static atomic_bool enabled = true;

void access_log_enable(bool on) { atomic_store(&enabled, on); }

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

static void put_size(buf *line, const char *key, size_t value)
{
    buf_puts(line, key);
    buf_uint(line, value);
}

void access_log_write(const access_log_entry *e)
{
    if (!atomic_load(&enabled))
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
    buf_puts(&line, ",\"method\":");
    buf_json_string(&line, e->method);
    buf_puts(&line, ",\"path\":");
    buf_json_string(&line, e->path);
    put_size(&line, ",\"status\":", e->status);
    buf_puts(&line,
             e->completed ? ",\"completed\":true" : ",\"completed\":false");
    put_size(&line, ",\"bytes_in\":", e->bytes_in);
    put_size(&line, ",\"bytes_out\":", e->bytes_out);
    put_ms(&line, ",\"queue_ms\":", e->queue_seconds);
    put_ms(&line, ",\"work_ms\":", e->work_seconds);
    put_ms(&line, ",\"compute_ms\":", e->compute_seconds);
    put_ms(&line, ",\"total_ms\":", e->total_seconds);
    if (e->heads) {
        put_size(&line, ",\"n\":", e->n);
        put_size(&line, ",\"d\":", e->d);
        put_size(&line, ",\"h\":", e->heads);
    }
    buf_puts(&line, "}\n");
    if (!buf_failed(&line)) {
        /* one write() per line keeps lines whole between threads */
        ssize_t ignored = write(STDERR_FILENO, line.data, line.len);
        (void)ignored;
    }
    buf_free(&line);
}
