/*
 * static_coding.c - the embedded assets' gzip and deflate forms, made once.
 *
 * DESIGN
 * The assets (the page, its modules and stylesheet, the API description)
 * are constant for the life of the process, and the static routes answer
 * them on the event threads: compressing one per request would hold every
 * other connection of that thread while zlib redoes the same work.  So at
 * start-up, before any event thread runs, each asset is compressed in both
 * codings by reply_coding_apply itself (the very bytes a request would get:
 * the same pieces, header and trailer), joined into one buffer, and kept
 * for the life of the process; the table is then only read, so the event
 * threads need no lock.  docs/performance.md ("Compressed replies") has
 * what it costs at start-up and what it saves per request.
 * A reply is matched to its asset by the address of its static body: the
 * static routes point at the embedded bytes themselves (server/api/
 * static.c).  Whether to code it is reply_coding_wanted()'s decision, as
 * for any reply, so sizes, types and weights are judged the same way.
 */
#include "server/http/static_coding.h"

#include "server/web/assets.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* One asset and its two coded forms (NULL: not made). */
typedef struct {
    const char *bytes;
    size_t len;
    char *coded[2]; /* [0] gzip, [1] deflate */
    size_t coded_len[2];
} coded_asset;

static coded_asset *table;
static size_t table_count;
static bool table_ok;
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

/* bytes compressed with `kind` into one malloc'd buffer, or NULL. */
static char *coded_form(const char *bytes, size_t len, reply_coding_kind kind,
                        size_t *coded_len)
{
    reply r = {0};
    reply_set_static(&r, 200, "text/plain", bytes, len);
    budget unlimited;
    budget_init(&unlimited, SIZE_MAX);
    reply_coding_apply(&r, (reply_accept){kind, true, true}, NULL, &unlimited,
                       NULL);
    char *joined = r.content_encoding ? malloc(r.body_len) : NULL;
    size_t at = 0;
    for (size_t i = 0; joined && i < r.part_count; i++) {
        memcpy(joined + at, r.parts[i].data, r.parts[i].len);
        at += r.parts[i].len;
    }
    *coded_len = at;
    reply_clear(&r);
    return joined;
}

static void add_asset(const char *bytes, size_t len)
{
    coded_asset *a = &table[table_count++];
    a->bytes = bytes;
    a->len = len;
    a->coded[0] = coded_form(bytes, len, REPLY_CODING_GZIP, &a->coded_len[0]);
    a->coded[1] =
        coded_form(bytes, len, REPLY_CODING_DEFLATE, &a->coded_len[1]);
    table_ok = table_ok && a->coded[0] && a->coded[1];
}

static void build_table(void)
{
    table = calloc(web_asset_count + 2, sizeof *table);
    if (!table)
        return;
    table_ok = true;
    add_asset(asset_index_html, asset_index_html_len);
    add_asset(asset_openapi_yaml, asset_openapi_yaml_len);
    for (size_t i = 0; i < web_asset_count; i++)
        add_asset(web_assets[i].bytes, web_assets[i].len);
}

bool static_coding_init(void)
{
    pthread_once(&table_once, build_table);
    return table_ok;
}

void static_coding_apply(reply *r, reply_accept accept)
{
    if (!r->body_static || r->parts)
        return;
    reply_coding_kind kind = reply_coding_wanted(r, accept);
    if (kind == REPLY_CODING_IDENTITY)
        return;
    size_t form = kind == REPLY_CODING_GZIP ? 0 : 1;
    for (size_t i = 0; i < table_count; i++)
        if (table[i].bytes == r->body && table[i].len == r->body_len) {
            if (!table[i].coded[form])
                return; /* not made: compressed per request */
            r->body = table[i].coded[form];
            r->body_len = table[i].coded_len[form];
            r->content_encoding = form == 0 ? "gzip" : "deflate";
            return;
        }
}
