#include "server/base/problem.h"

#include "server/base/buf.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* A detail longer than this is cut: it is one sentence for a human. */
#define PROBLEM_DETAIL_MAX 1024

/* The RFC 9457 document up to its pointer: {"type", "title", "status",
 * "code", "detail". */
static void problem_write(buf *b, const error_code_row *row, const char *detail)
{
    buf_puts(b, "{\"type\":");
    buf_printf(b, "\"urn:attention:problem:%s\"", row->name);
    buf_puts(b, ",\"title\":");
    buf_json_string(b, row->title);
    buf_printf(b, ",\"status\":%u,\"code\":", row->status);
    buf_json_string(b, row->name);
    buf_puts(b, ",\"detail\":");
    buf_json_string(b, detail);
}

/* The Open Inference Protocol's error object up to its pointer: its
 * clients read "error"; "code" is the same as in a problem document. */
static void oip_error_write(buf *b, const char *code, const char *detail)
{
    buf_puts(b, "{\"error\":");
    buf_json_string(b, detail);
    buf_puts(b, ",\"code\":");
    buf_json_string(b, code);
}

/* What a reply says when its error body cannot be built: out_of_memory
 * from the table, written once into static storage (nothing allocated). */
#define FALLBACK_DETAIL "the server ran out of memory building this reply"
#define FALLBACK_MAX 512

static char fallback[2][FALLBACK_MAX]; /* [0] problem+json, [1] OIP's */
static pthread_once_t fallback_once = PTHREAD_ONCE_INIT;

static void write_fallbacks(void)
{
    const error_code_row *row = error_code_info(ERR_OUT_OF_MEMORY);
    snprintf(fallback[0], FALLBACK_MAX,
             "{\"type\":\"urn:attention:problem:%s\",\"title\":\"%s\","
             "\"status\":%u,\"code\":\"%s\",\"detail\":\"" FALLBACK_DETAIL
             "\"}\n",
             row->name, row->title, row->status, row->name);
    snprintf(fallback[1], FALLBACK_MAX,
             "{\"error\":\"" FALLBACK_DETAIL "\",\"code\":\"%s\"}\n",
             row->name);
}

static void out_of_memory_reply(reply *r, bool oip)
{
    pthread_once(&fallback_once, write_fallbacks);
    const error_code_row *row = error_code_info(ERR_OUT_OF_MEMORY);
    const char *body = fallback[oip];
    reply_set_static(r, row->status,
                     oip ? "application/json" : "application/problem+json",
                     body, strlen(body));
    r->retry_after = row->retry_after;
    r->code = row->name;
}

/* Builds the error body of an already formatted detail, in the shape the
 * reply's route speaks. */
static void problem_build(reply *r, const error_code_row *row,
                          const char *pointer, const char *detail)
{
    bool oip = r->error_shape == REPLY_ERRORS_OIP;
    buf b = {0};
    if (oip)
        oip_error_write(&b, row->name, detail);
    else
        problem_write(&b, row, detail);
    if (pointer) {
        buf_puts(&b, ",\"pointer\":");
        buf_json_string(&b, pointer);
    }
    if (r->trace_id) {
        buf_puts(&b, ",\"trace_id\":");
        buf_json_string(&b, r->trace_id);
    }
    buf_puts(&b, "}\n");
    if (buf_failed(&b)) {
        buf_free(&b);
        out_of_memory_reply(r, oip);
        return;
    }
    size_t len;
    char *body = buf_take(&b, &len);
    reply_set_owned(r, row->status,
                    oip ? "application/json" : "application/problem+json", body,
                    len);
    r->retry_after = row->retry_after;
    r->code = row->name;
}

void problem_reply(reply *r, error_code code, const char *pointer,
                   const char *fmt, ...)
{
    char detail[PROBLEM_DETAIL_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    problem_build(r, error_code_info(code), pointer, detail);
}
