/*
 * reply_coding.c - a reply compressed as the client's Accept-Encoding asks.
 *
 * DESIGN
 * Negotiation (RFC 9110 §12.5.3): each listed coding has a weight (q, 0 to
 * 1, default 1); "*" weighs every coding not listed, identity included;
 * identity not listed and no "*" is acceptable (q 1); x-gzip is gzip.  A
 * coding of weight 0 is refused.  The server picks gzip or deflate,
 * whichever the client weighs more (gzip on a tie), and uses it for a text
 * reply of REPLY_CODING_MIN_BYTES or more when the client weighs it at
 * least as much as no coding, and for any text reply when the client
 * refuses identity.  A client that refuses identity and both codings gets
 * the reply as it is (§12.1 lets a server disregard the field; a refusal
 * would itself be a body in no coding it accepts).  Binary bodies
 * (application/octet-stream tensors) are never compressed: their bits
 * barely shrink.
 * Compression (zlib, level 1: the fastest; docs/performance.md measures
 * what higher levels save) runs on the thread that finished the reply:
 * a pool worker for a computed one, so the event threads never pay for a
 * big one.  The body is cut into CODING_CHUNK pieces compressed side by
 * side as pigz does: each piece a raw deflate stream primed with the 32 KiB
 * before it and ended by a sync flush (the last by the final block), so
 * that their concatenation is one stream; the checksums (CRC-32 for gzip,
 * Adler-32 for deflate, which is the zlib format) are combined.  The
 * compressed pieces become the reply's parts, sent as one I/O vector.
 */
#include "server/http/reply_coding.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

/* Bytes of the body one task compresses: pigz's block size, where the
 * 32 KiB of dictionary copied per piece is a quarter of its input. */
#define CODING_CHUNK ((size_t)128 << 10)
/* deflate's window: 32 KiB, the dictionary a piece is primed with. */
#define CODING_WINDOW ((size_t)32 << 10)
/* Bytes a sync flush and the block headers may add to a piece beyond
 * zlib's bound. */
#define CODING_SLACK 64

/* ---- Accept-Encoding ------------------------------------------------- */

/* Weights in thousandths; -1: not listed. */
typedef struct {
    int gzip, deflate, identity, star;
} weights;

static const char *skip_ows(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    return p;
}

/* A qvalue ("0", "0.5", "1.000"), in thousandths; -1 when malformed. */
static int parse_qvalue(const char *p, const char *end)
{
    if (p >= end || (*p != '0' && *p != '1'))
        return -1;
    int q = (*p++ - '0') * 1000;
    if (p < end && *p == '.') {
        p++;
        for (int scale = 100; scale > 0 && p < end && *p >= '0' && *p <= '9';
             scale /= 10)
            q += (*p++ - '0') * scale;
    }
    return p == end && q <= 1000 ? q : -1;
}

/* One element, "coding *( OWS ; OWS param )", into w (a malformed weight
 * leaves the element out). */
static void read_element(const char *p, const char *end, weights *w)
{
    p = skip_ows(p, end);
    const char *name = p;
    while (p < end && *p != ';' && *p != ' ' && *p != '\t')
        p++;
    size_t name_len = (size_t)(p - name);
    int q = 1000;
    while (p < end && *p != ';')
        p++;
    while (p < end) { /* at a ';' */
        const char *param = skip_ows(p + 1, end);
        const char *param_end = param;
        while (param_end < end && *param_end != ';')
            param_end++;
        p = param_end;
        while (param_end > param &&
               (param_end[-1] == ' ' || param_end[-1] == '\t'))
            param_end--;
        if (param_end - param >= 2 && (param[0] == 'q' || param[0] == 'Q') &&
            param[1] == '=')
            q = parse_qvalue(param + 2, param_end);
    }
    if (q < 0 || name_len == 0)
        return;
#define IS(word)                                                               \
    (name_len == strlen(word) && !strncasecmp(name, word, name_len))
    if (IS("gzip") || IS("x-gzip"))
        w->gzip = q;
    else if (IS("deflate"))
        w->deflate = q;
    else if (IS("identity"))
        w->identity = q;
    else if (IS("*"))
        w->star = q;
#undef IS
}

reply_accept reply_coding_accept(const char *accept_encoding)
{
    reply_accept none = {REPLY_CODING_IDENTITY, false, false};
    if (!accept_encoding)
        return none;
    weights w = {-1, -1, -1, -1};
    const char *p = accept_encoding, *end = p + strlen(p);
    while (p < end) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        read_element(p, comma ? comma : end, &w);
        p = comma ? comma + 1 : end;
    }
    int unlisted = w.star >= 0 ? w.star : 0;
    int gzip = w.gzip >= 0 ? w.gzip : unlisted;
    int deflate = w.deflate >= 0 ? w.deflate : unlisted;
    int identity = w.identity >= 0 ? w.identity : w.star >= 0 ? w.star : 1000;
    reply_accept a = none;
    int best = 0;
    if (gzip > 0 && gzip >= deflate) {
        a.best = REPLY_CODING_GZIP;
        best = gzip;
    } else if (deflate > 0) {
        a.best = REPLY_CODING_DEFLATE;
        best = deflate;
    }
    a.compress_big = a.best != REPLY_CODING_IDENTITY && best >= identity;
    a.identity_refused = identity == 0;
    return a;
}

/* ---- compression ------------------------------------------------------ */

/* One thread's deflater and the dictionary it primes a piece with. */
typedef struct {
    z_stream z;
    bool ready;
    unsigned char dict[CODING_WINDOW];
} deflater;

/* One piece of the body, compressed. */
typedef struct {
    unsigned char *out;
    size_t out_len;
    unsigned long check; /* CRC-32 or Adler-32 of the piece's input */
    bool ok;
} piece;

typedef struct {
    const reply_part *spans; /* the body, in spans (one when not in parts) */
    size_t span_count;
    size_t body_len;
    bool gzip;
    struct attn_stop *stop; /* cancelled: the pieces left are skipped */
    deflater *threads;      /* one per worker that may join */
    piece *pieces;
} coding_job;

/* Calls fn on each span of the body's bytes [off, off + len). */
static bool each_span(const coding_job *job, size_t off, size_t len,
                      bool (*fn)(void *, const unsigned char *, size_t),
                      void *ctx)
{
    size_t start = 0;
    for (size_t i = 0; i < job->span_count && len > 0; i++) {
        size_t span_len = job->spans[i].len;
        if (off < start + span_len) {
            size_t from = off - start;
            size_t take = span_len - from < len ? span_len - from : len;
            if (!fn(ctx, (const unsigned char *)job->spans[i].data + from,
                    take))
                return false;
            off += take;
            len -= take;
        }
        start += span_len;
    }
    return true;
}

static bool copy_span(void *ctx, const unsigned char *data, size_t len)
{
    unsigned char **to = ctx;
    memcpy(*to, data, len);
    *to += len;
    return true;
}

typedef struct {
    z_stream *z;
    unsigned long check;
    bool gzip;
} feed;

static bool deflate_span(void *ctx, const unsigned char *data, size_t len)
{
    feed *f = ctx;
    f->check = f->gzip ? crc32(f->check, data, (uInt)len)
                       : adler32(f->check, data, (uInt)len);
    f->z->next_in = (Bytef *)(uintptr_t)data;
    f->z->avail_in = (uInt)len;
    return deflate(f->z, Z_NO_FLUSH) == Z_OK && f->z->avail_in == 0 &&
           f->z->avail_out > 0;
}

/* Piece i: the body's bytes [i·CODING_CHUNK, …) as raw deflate, primed
 * with the window before them, ended by a sync flush (the last piece by
 * the final block). */
static void compress_piece(void *ctx, size_t i, size_t worker)
{
    coding_job *job = ctx;
    deflater *d = &job->threads[worker];
    piece *pc = &job->pieces[i];
    size_t off = i * CODING_CHUNK;
    size_t len =
        job->body_len - off < CODING_CHUNK ? job->body_len - off : CODING_CHUNK;
    bool last = off + len == job->body_len;
    if (attn_stop_cancelled(job->stop))
        return;
    if (!d->ready) {
        if (deflateInit2(&d->z, Z_BEST_SPEED, Z_DEFLATED, -MAX_WBITS, 8,
                         Z_DEFAULT_STRATEGY) != Z_OK)
            return;
        d->ready = true;
    } else if (deflateReset(&d->z) != Z_OK) {
        return;
    }
    if (off > 0) {
        size_t dict_len = off < CODING_WINDOW ? off : CODING_WINDOW;
        unsigned char *to = d->dict;
        each_span(job, off - dict_len, dict_len, copy_span, &to);
        if (deflateSetDictionary(&d->z, d->dict, (uInt)dict_len) != Z_OK)
            return;
    }
    size_t cap = deflateBound(&d->z, (uLong)len) + CODING_SLACK;
    pc->out = malloc(cap);
    if (!pc->out)
        return;
    d->z.next_out = pc->out;
    d->z.avail_out = (uInt)cap;
    feed f = {&d->z, job->gzip ? crc32(0, NULL, 0) : adler32(0, NULL, 0),
              job->gzip};
    if (!each_span(job, off, len, deflate_span, &f))
        return;
    int rc = deflate(&d->z, last ? Z_FINISH : Z_SYNC_FLUSH);
    if (rc != (last ? Z_STREAM_END : Z_OK) || d->z.avail_out == 0)
        return;
    pc->out_len = cap - d->z.avail_out;
    pc->check = f.check;
    pc->ok = true;
}

static bool is_text(const char *content_type)
{
    return content_type &&
           (strncmp(content_type, "text/", 5) == 0 ||
            strstr(content_type, "json") || strstr(content_type, "yaml"));
}

static void put_le32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* The wrapper's header (gzip: RFC 1952, no name, no time, fastest; zlib:
 * RFC 1950, 32 KiB window, fastest) or trailer (gzip: CRC-32 and length,
 * little-endian; zlib: Adler-32, big-endian), as a part of its own. */
static bool wrapper_part(reply_part *part, bool gzip, bool header,
                         unsigned long check, size_t body_len)
{
    static const unsigned char gzip_header[10] = {0x1f, 0x8b, 8, 0, 0,
                                                  0,    0,    0, 4, 0xff};
    static const unsigned char zlib_header[2] = {0x78, 0x01};
    unsigned char bytes[10];
    size_t n;
    if (header) {
        n = gzip ? sizeof gzip_header : sizeof zlib_header;
        memcpy(bytes, gzip ? gzip_header : zlib_header, n);
    } else if (gzip) {
        put_le32(bytes, (uint32_t)check);
        put_le32(bytes + 4, (uint32_t)body_len);
        n = 8;
    } else {
        for (int i = 0; i < 4; i++)
            bytes[i] = (unsigned char)(check >> (24 - 8 * i));
        n = 4;
    }
    part->data = malloc(n);
    if (!part->data)
        return false;
    memcpy(part->data, bytes, n);
    part->len = n;
    return true;
}

/* The compressed body as parts: header, the pieces, trailer.  Takes each
 * piece's output; NULL when out of memory (the pieces are then kept). */
static reply_part *assemble(coding_job *job, size_t count, size_t *parts_out)
{
    reply_part *parts = calloc(count + 2, sizeof *parts);
    if (!parts)
        return NULL;
    unsigned long check = job->pieces[0].check;
    size_t off = 0;
    for (size_t i = 0; i < count; i++) {
        size_t len = job->body_len - off < CODING_CHUNK ? job->body_len - off
                                                        : CODING_CHUNK;
        if (i > 0)
            check = job->gzip ? crc32_combine(check, job->pieces[i].check,
                                              (z_off_t)len)
                              : adler32_combine(check, job->pieces[i].check,
                                                (z_off_t)len);
        off += len;
    }
    if (!wrapper_part(&parts[0], job->gzip, true, 0, 0) ||
        !wrapper_part(&parts[count + 1], job->gzip, false, check,
                      job->body_len)) {
        free(parts[0].data);
        free(parts);
        return NULL;
    }
    for (size_t i = 0; i < count; i++) {
        parts[i + 1] =
            (reply_part){(char *)job->pieces[i].out, job->pieces[i].out_len};
        job->pieces[i].out = NULL;
    }
    *parts_out = count + 2;
    return parts;
}

reply_coding_kind reply_coding_wanted(const reply *r, reply_accept accept)
{
    if (r->content_encoding || accept.best == REPLY_CODING_IDENTITY ||
        r->body_len == 0 || !is_text(r->content_type))
        return REPLY_CODING_IDENTITY;
    return accept.identity_refused || (accept.compress_big &&
                                       r->body_len >= REPLY_CODING_MIN_BYTES)
               ? accept.best
               : REPLY_CODING_IDENTITY;
}

/* The reservation the compressed pieces may need. */
static size_t bound_of(size_t body_len, size_t count)
{
    return (size_t)compressBound((uLong)body_len) +
           count * (CODING_SLACK + 16) + 32;
}

/* Replaces r's body by the parts (which it takes), and holds their bytes
 * in memory out of `reserved` (the rest is given back). */
static void swap_body(reply *r, reply_part *parts, size_t count, budget *memory,
                      size_t reserved, bool gzip)
{
    if (r->parts)
        reply_parts_free(r->parts, r->part_count);
    else if (!r->body_static)
        free(r->body);
    r->body = NULL;
    r->body_static = false;
    r->parts = parts;
    r->part_count = count;
    r->body_len = 0;
    for (size_t i = 0; i < count; i++)
        r->body_len += parts[i].len;
    r->content_encoding = gzip ? "gzip" : "deflate";
    budget_release(memory, reserved - r->body_len);
    reply_hold(r, memory, r->body_len);
}

bool reply_coding_apply(reply *r, reply_accept accept, pool *workers,
                        budget *memory, struct attn_stop *stop)
{
    if (reply_coding_wanted(r, accept) == REPLY_CODING_IDENTITY)
        return true;
    size_t count = (r->body_len + CODING_CHUNK - 1) / CODING_CHUNK;
    size_t reserved = bound_of(r->body_len, count);
    if (!budget_reserve(memory, reserved))
        return true; /* no room for both copies: it goes out as it is */
    reply_part whole = {r->body, r->body_len};
    size_t threads = workers ? pool_size(workers) + 1 : 1;
    coding_job job = {
        .spans = r->parts ? r->parts : &whole,
        .span_count = r->parts ? r->part_count : 1,
        .body_len = r->body_len,
        .gzip = accept.best == REPLY_CODING_GZIP,
        .stop = stop,
        .threads = calloc(threads, sizeof(deflater)),
        .pieces = calloc(count, sizeof(piece)),
    };
    bool ok = job.threads && job.pieces;
    if (ok)
        pool_parallel_for(workers, count, compress_piece, &job);
    for (size_t i = 0; ok && i < count; i++)
        ok = job.pieces[i].ok;
    size_t part_count = 0;
    reply_part *parts = ok ? assemble(&job, count, &part_count) : NULL;
    if (parts) {
        swap_body(r, parts, part_count, memory, reserved, job.gzip);
    } else {
        budget_release(memory, reserved);
    }
    for (size_t i = 0; job.pieces && i < count; i++)
        free(job.pieces[i].out);
    for (size_t t = 0; job.threads && t < threads; t++)
        if (job.threads[t].ready)
            deflateEnd(&job.threads[t].z);
    free(job.pieces);
    free(job.threads);
    return parts || !attn_stop_cancelled(stop);
}
