#include "server/base/problem.h"

#include "server/base/buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* A detail longer than this is cut: it is one sentence for a human. */
#define PROBLEM_DETAIL_MAX 1024

const char *problem_title(unsigned status)
{
    switch (status) {
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 408:
        return "Request Timeout";
    case 413:
        return "Content Too Large";
    case 415:
        return "Unsupported Media Type";
    case 422:
        return "Unprocessable Content";
    case 431:
        return "Request Header Fields Too Large";
    case 500:
        return "Internal Server Error";
    case 501:
        return "Not Implemented";
    case 503:
        return "Service Unavailable";
    default:
        return "Error";
    }
}

/* The RFC 9457 document up to its pointer: {"type", "title", "status",
 * "code", "detail". */
static void problem_write(buf *b, unsigned status, const char *code,
                          const char *detail)
{
    buf_puts(b, "{\"type\":");
    buf_printf(b, "\"urn:attention:problem:%s\"", code);
    buf_puts(b, ",\"title\":");
    buf_json_string(b, problem_title(status));
    buf_printf(b, ",\"status\":%u,\"code\":", status);
    buf_json_string(b, code);
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
static void problem_build(reply *r, unsigned status, const char *code,
                          const char *pointer, const char *detail)
{
    bool oip = r->error_shape == REPLY_ERRORS_OIP;
    buf b = {0};
    if (oip)
        oip_error_write(&b, code, detail);
    else
        problem_write(&b, status, code, detail);
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
        r->retry_after = PROBLEM_RETRY_AFTER_SECONDS;
        return;
    }
    size_t len;
    char *body = buf_take(&b, &len);
    reply_set_owned(r, status,
                    oip ? "application/json" : "application/problem+json", body,
                    len);
}

void problem_reply(reply *r, unsigned status, const char *code,
                   const char *pointer, const char *fmt, ...)
{
    char detail[PROBLEM_DETAIL_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    problem_build(r, status, code, pointer, detail);
}

void problem_reply_retry(reply *r, const char *code, const char *fmt, ...)
{
    char detail[PROBLEM_DETAIL_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    problem_build(r, 503, code, NULL, detail);
    r->retry_after = PROBLEM_RETRY_AFTER_SECONDS;
}
