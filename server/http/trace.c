/*
 * trace.c - W3C Trace Context: traceparent and tracestate read as the
 * specification's grammar says, and the ids of new traces and spans.
 *
 * DESIGN
 * Ids are random (the specification asks for random trace ids): each
 * thread draws them from a splitmix64 generator seeded once from
 * getrandom(), so a request costs no system call.  The headers are read
 * from libmicrohttpd's list in one pass, which also tells a traceparent
 * sent twice (the specification: ignore both) and joins the tracestate
 * lines in order, as one list (RFC 9110 5.3).
 */
#include "server/http/trace.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>

/* The specification's cap on tracestate's list-members. */
#define TRACE_STATE_MEMBERS_MAX 32

/* ---- ids ---------------------------------------------------------------- */

static uint64_t next_random(void)
{
    static _Thread_local uint64_t state;
    static _Thread_local bool seeded;
    if (!seeded) {
        if (getrandom(&state, sizeof state, 0) != (ssize_t)sizeof state) {
            struct timespec now; /* no entropy: distinct, if guessable */
            clock_gettime(CLOCK_REALTIME, &now);
            state = (uint64_t)now.tv_nsec ^ ((uint64_t)now.tv_sec << 30) ^
                    (uint64_t)(uintptr_t)&state;
        }
        seeded = true;
    }
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL); /* splitmix64 */
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* `digits` (16 or 32) random lowercase hex digits, not all zero. */
static void random_hex(char *out, size_t digits)
{
    static const char hex[] = "0123456789abcdef";
    uint64_t words[2];
    do {
        words[0] = next_random();
        words[1] = next_random();
    } while (words[0] == 0 && (digits <= 16 || words[1] == 0));
    for (size_t i = 0; i < digits; i++)
        out[i] = hex[(words[i / 16] >> (60 - 4 * (i % 16))) & 0xf];
    out[digits] = '\0';
}

/* ---- traceparent -------------------------------------------------------- */

static bool lower_hex(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return false;
    return true;
}

static bool all_zero(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (s[i] != '0')
            return false;
    return true;
}

/* Why value (len bytes, whitespace trimmed) is not a traceparent to join,
 * or NULL when it is. */
static const char *parent_fault(const char *v, size_t len)
{
    if (len < TRACE_PARENT_LEN || !lower_hex(v, 2) || v[2] != '-' ||
        !lower_hex(v + 3, 32) || v[35] != '-' || !lower_hex(v + 36, 16) ||
        v[52] != '-' || !lower_hex(v + 53, 2))
        return "malformed";
    if (memcmp(v, "ff", 2) == 0)
        return "invalid_version";
    /* version 00 is exactly this long; a later one may append fields */
    if (memcmp(v, "00", 2) == 0
            ? len != TRACE_PARENT_LEN
            : len > TRACE_PARENT_LEN && v[TRACE_PARENT_LEN] != '-')
        return "malformed";
    if (all_zero(v + 3, 32))
        return "zero_trace_id";
    if (all_zero(v + 36, 16))
        return "zero_parent_id";
    return NULL;
}

/* ---- tracestate --------------------------------------------------------- */

static bool key_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '*' || c == '/';
}

/* key = lcalpha 0*255(keychar), or tenant "@" system: tenant (lcalpha or
 * DIGIT) 0*240(keychar), system lcalpha 0*13(keychar). */
static bool state_key(const char *k, size_t len)
{
    const char *at = memchr(k, '@', len);
    if (!at)
        return len >= 1 && len <= 256 && k[0] >= 'a' && k[0] <= 'z' &&
               strspn(k, "abcdefghijklmnopqrstuvwxyz0123456789_-*/") >= len;
    size_t tenant = (size_t)(at - k), system = len - tenant - 1;
    if (tenant < 1 || tenant > 241 || system < 1 || system > 14 ||
        !((k[0] >= 'a' && k[0] <= 'z') || (k[0] >= '0' && k[0] <= '9')) ||
        !(at[1] >= 'a' && at[1] <= 'z'))
        return false;
    for (size_t i = 0; i < len; i++)
        if (i != tenant && !key_char(k[i]))
            return false;
    return true;
}

/* value = 0*255(chr) nblk-chr: printable ASCII but ',' and '=', spaces
 * allowed inside, not at the end. */
static bool state_value(const char *v, size_t len)
{
    if (len < 1 || len > 256 || v[len - 1] == ' ')
        return false;
    for (size_t i = 0; i < len; i++)
        if (v[i] < 0x20 || v[i] > 0x7e || v[i] == ',' || v[i] == '=')
            return false;
    return true;
}

/* Why the list `s` is not a tracestate to echo, or NULL. */
static const char *state_fault(const char *s)
{
    size_t members = 0;
    while (*s) {
        size_t len = strcspn(s, ",");
        const char *m = s;
        while (len && (*m == ' ' || *m == '\t'))
            m++, len--;
        while (len && (m[len - 1] == ' ' || m[len - 1] == '\t'))
            len--;
        if (len) { /* an empty member is allowed, and not counted */
            const char *eq = memchr(m, '=', len);
            if (!eq || !state_key(m, (size_t)(eq - m)) ||
                !state_value(eq + 1, len - (size_t)(eq - m) - 1))
                return "malformed";
            if (++members > TRACE_STATE_MEMBERS_MAX)
                return "too_many_members";
        }
        s += strcspn(s, ",");
        if (*s == ',')
            s++;
    }
    return NULL;
}

/* ---- the request's headers ---------------------------------------------- */

typedef struct {
    trace_context *t;
    const char *parent;
    size_t parent_len;
    int parents;
    size_t state_len;
    bool state_too_long;
} trace_scan;

static enum MHD_Result scan_header(void *cls, enum MHD_ValueKind kind,
                                   const char *key, size_t key_size,
                                   const char *value, size_t value_size)
{
    (void)kind;
    (void)key_size;
    trace_scan *scan = cls;
    if (strcasecmp(key, "traceparent") == 0) {
        scan->parent = value;
        scan->parent_len = value_size;
        scan->parents++;
    } else if (strcasecmp(key, "tracestate") == 0) {
        char *state = scan->t->state;
        size_t room = TRACE_STATE_MAX - scan->state_len;
        size_t need = value_size + (scan->state_len ? 1 : 0);
        if (need > room) {
            scan->state_too_long = true;
        } else {
            if (scan->state_len)
                state[scan->state_len++] = ',';
            memcpy(state + scan->state_len, value, value_size);
            scan->state_len += value_size;
            state[scan->state_len] = '\0';
        }
    }
    return MHD_YES;
}

/* The traceparent's value without the whitespace around it. */
static const char *trimmed(const char *v, size_t *len)
{
    while (*len && (*v == ' ' || *v == '\t'))
        v++, (*len)--;
    while (*len && (v[*len - 1] == ' ' || v[*len - 1] == '\t'))
        (*len)--;
    return v;
}

void trace_begin(struct MHD_Connection *conn, trace_context *t)
{
    *t = (trace_context){.parent_id = ""};
    trace_scan scan = {.t = t};
    MHD_get_connection_values_n(conn, MHD_HEADER_KIND, scan_header, &scan);
    size_t len = scan.parent_len;
    const char *v = scan.parent ? trimmed(scan.parent, &len) : NULL;
    t->parent_ignored = scan.parents > 1 ? "repeated"
                        : v              ? parent_fault(v, len)
                                         : NULL;
    random_hex(t->span_id, 16);
    if (v && !t->parent_ignored) {
        memcpy(t->trace_id, v + 3, 32);
        memcpy(t->parent_id, v + 36, 16);
        unsigned flags = 0;
        sscanf(v + 53, "%2x", &flags);
        /* version 00 defines the sampled flag alone; the others are sent
         * as zero */
        snprintf(t->flags, sizeof t->flags, "%02x", flags & 0x01);
        if (scan.state_too_long)
            t->state_ignored = "too_long";
        else if (t->state[0])
            t->state_ignored = state_fault(t->state);
    } else {
        /* a trace of the service's own, its requests all recorded (the
         * access log): sampled */
        random_hex(t->trace_id, 32);
        memcpy(t->flags, "01", 3);
    }
    if (!(v && !t->parent_ignored) || t->state_ignored)
        t->state[0] = '\0'; /* a tracestate without its trace is not used */
}

void trace_parent_header(const trace_context *t, char out[TRACE_PARENT_LEN + 1])
{
    /* "00-" trace id "-" span id "-" flags, each of fixed length (no
     * snprintf: it parses its format on every request) */
    char *p = out;
    memcpy(p, "00-", 3);
    p += 3;
    memcpy(p, t->trace_id, 32);
    p += 32;
    *p++ = '-';
    memcpy(p, t->span_id, 16);
    p += 16;
    *p++ = '-';
    memcpy(p, t->flags, 2);
    p[2] = '\0';
}
