#include "access_log.h"

#include "buf.h"

#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static atomic_bool enabled = true;

void access_log_enable(bool on) { atomic_store(&enabled, on); }

void access_log_write(const access_log_entry *e)
{
    if (!atomic_load(&enabled))
        return;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    struct tm tm;
    gmtime_r(&now.tv_sec, &tm);
    char when[40];
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
    buf line = {0};
    buf_printf(&line, "{\"time\":\"%s.%03ldZ\",\"request_id\":", when,
               now.tv_nsec / 1000000);
    buf_json_string(&line, e->id);
    buf_puts(&line, ",\"method\":");
    buf_json_string(&line, e->method);
    buf_puts(&line, ",\"path\":");
    buf_json_string(&line, e->path);
    buf_printf(&line,
               ",\"status\":%u,\"completed\":%s,\"bytes_in\":%zu,"
               "\"bytes_out\":%zu,\"queue_ms\":%.3f,\"compute_ms\":%.3f,"
               "\"total_ms\":%.3f",
               e->status, e->completed ? "true" : "false", e->bytes_in,
               e->bytes_out, e->queue_seconds * 1e3, e->compute_seconds * 1e3,
               e->total_seconds * 1e3);
    if (e->heads)
        buf_printf(&line, ",\"n\":%zu,\"d\":%zu,\"h\":%zu", e->n, e->d,
                   e->heads);
    buf_puts(&line, "}\n");
    if (!buf_failed(&line)) {
        /* one write() per line keeps lines whole between threads */
        ssize_t ignored = write(STDERR_FILENO, line.data, line.len);
        (void)ignored;
    }
    buf_free(&line);
}
