#include "server/base/problem.h"

#include "server/base/buf.h"

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
    buf_puts(&b, "}\n");
    if (buf_failed(&b)) {
        static const char fallback[] =
            "{\"type\":\"urn:attention:problem:out_of_memory\",\"title\":"
            "\"Service Unavailable\",\"status\":503,\"code\":\"out_of_memory\","
            "\"detail\":\"the server ran out of memory building this "
            "reply\"}\n";
        static const char oip_fallback[] =
            "{\"error\":\"the server ran out of memory building this "
            "reply\",\"code\":\"out_of_memory\"}\n";
        buf_free(&b);
        if (oip)
            reply_set_static(r, 503, "application/json", oip_fallback,
                             sizeof oip_fallback - 1);
        else
            reply_set_static(r, 503, "application/problem+json", fallback,
                             sizeof fallback - 1);
        r->retry_after = error_code_info(ERR_OUT_OF_MEMORY)->retry_after;
        return;
    }
    size_t len;
    char *body = buf_take(&b, &len);
    reply_set_owned(r, row->status,
                    oip ? "application/json" : "application/problem+json", body,
                    len);
    r->retry_after = row->retry_after;
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
