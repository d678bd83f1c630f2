/*
 * encode_tensor.c - tensors as JSON text, written straight into one buffer:
 * the one number writer of every reply.
 *
 * Numbers go through numfmt (shortest round trip).  Space for a whole tensor
 * is reserved up front (NUMFMT_MAX per number), so the inner loop only
 * formats and copies.
 */
#include "server/json/encode_tensor.h"

#include "server/json/half.h"

#include "server/json/base64.h"
#include "server/json/numfmt.h"

#include <math.h>
#include <string.h>

/* Numbers written between two checks of the buffer's room: bounds what is
 * reserved beyond the reply's size estimate to 256 × 33 bytes. */
#define ENCODE_CHUNK 256
/* Numbers written between two reads of the request's stop (a cancelled
 * one ends the writing: nobody waits for the reply): about 0.2 ms of
 * formatting, so a reply stops within that of its client's hang-up and
 * the read costs nothing measurable (docs/performance.md, "Stopping the
 * encoding"). */
#define ENCODE_STOP_EVERY 4096

void encode_numbers(buf *out, const void *data, size_t count,
                    tensor_dtype dtype, const char *neg_inf)
{
    for (size_t start = 0; start < count; start += ENCODE_CHUNK) {
        size_t end =
            count - start < ENCODE_CHUNK ? count : start + ENCODE_CHUNK;
        if (!buf_reserve(out, (end - start) * (NUMFMT_MAX + 1) + 1))
            return;
        char *dst = out->data + out->len;
        for (size_t i = start; i < end; i++) {
            double value = dtype == TENSOR_FLOAT32
                               ? (double)((const float *)data)[i]
                               : ((const double *)data)[i];
            if (i)
                *dst++ = ',';
            if (neg_inf && value == -INFINITY) {
                size_t len = strlen(neg_inf);
                memcpy(dst, neg_inf, len);
                dst += len;
            } else if (dtype == TENSOR_FLOAT32) {
                dst += numfmt_float((float)value, dst);
            } else {
                dst += numfmt_double(value, dst);
            }
        }
        *dst = '\0';
        out->len = (size_t)(dst - out->data);
    }
}

/* Rows [r_begin, r_end) of a tensor of the given shape, as nested-array
 * text: each row's numbers with the brackets and commas around it that
 * depend only on the row's index, so that ranges can be written apart and
 * joined in order.  Ends early, the text incomplete, once stop is
 * cancelled (read before a row, every ENCODE_STOP_EVERY numbers). */
static void encode_rows(buf *out, const void *data, const size_t *dims,
                        int rank, size_t r_begin, size_t r_end,
                        tensor_dtype dtype, const char *neg_inf,
                        struct attn_stop *stop)
{
    size_t row = dims[rank - 1];
    size_t elem = tensor_dtype_size(dtype);
    size_t unread = ENCODE_STOP_EVERY; /* numbers since the stop was read */
    for (size_t r = r_begin; r < r_end; r++, unread += row) {
        if (unread >= ENCODE_STOP_EVERY) {
            if (attn_stop_cancelled(stop))
                return;
            unread = 0;
        }
        /* one bracket per dimension that starts (ends) at this row */
        size_t rem = r;
        int opens = 1;
        for (int i = rank - 2; i >= 0 && rem % dims[i] == 0; i--) {
            opens++;
            rem /= dims[i];
        }
        if (r)
            buf_append(out, ",", 1);
        for (int i = 0; i < opens; i++)
            buf_append(out, "[", 1);
        encode_numbers(out, (const char *)data + r * row * elem, row, dtype,
                       neg_inf);
        rem = r + 1;
        int closes = 1;
        for (int i = rank - 2; i >= 0 && rem % dims[i] == 0; i--) {
            closes++;
            rem /= dims[i];
        }
        for (int i = 0; i < closes; i++)
            buf_append(out, "]", 1);
    }
}

/* Tensors of at least this many numbers are written by several threads:
 * below it the hand-off costs more than the writing it shares
 * (docs/performance.md, "The server's constants"). */
#define ENCODE_PARALLEL_MIN 65536
/* Bytes a number usually takes: 17 significant digits, sign, point,
 * exponent and comma (a guess for reserving, not a limit). */
#define ENCODE_TYPICAL 24
/* Pieces a large tensor is cut into (each thread takes pieces in turn). */
#define ENCODE_PIECES 32

/* Writes units [u0, u1) of a tensor (rows, or numbers) into out. */
typedef void encode_span_fn(const void *ctx, buf *out, size_t u0, size_t u1);

/* A large tensor's units cut into ENCODE_PIECES pieces, each written by a
 * worker into a buffer of its own with room for typical numbers up front
 * (no doubling chain): unit_bytes a unit, plus extra a piece. */
typedef struct {
    encode_span_fn *write;
    const void *ctx;
    size_t units;
    size_t unit_bytes;
    size_t extra;
    buf piece[ENCODE_PIECES];
} encode_pieces_job;

static void encode_piece(void *ctx, size_t i, size_t worker)
{
    (void)worker;
    encode_pieces_job *job = ctx;
    size_t u0 = job->units * i / ENCODE_PIECES;
    size_t u1 = job->units * (i + 1) / ENCODE_PIECES;
    buf_reserve(&job->piece[i], (u1 - u0) * job->unit_bytes + job->extra);
    job->write(job->ctx, &job->piece[i], u0, u1);
}

/* The pieces written side by side on the pool, then handed to out in
 * order. */
static void encode_in_pieces(buf_chain *out, pool *workers, size_t units,
                             size_t unit_bytes, size_t extra,
                             encode_span_fn *write, const void *ctx)
{
    encode_pieces_job job = {.write = write,
                             .ctx = ctx,
                             .units = units,
                             .unit_bytes = unit_bytes,
                             .extra = extra};
    pool_parallel_for(workers, ENCODE_PIECES, encode_piece, &job);
    for (size_t i = 0; i < ENCODE_PIECES; i++)
        buf_chain_adopt(out, &job.piece[i]);
}

/* What a piece of a tensor needs to write its numbers: its rows
 * (encode_rows_span: dims and rank) or a run of its flat list
 * (encode_flat_span). */
typedef struct {
    const void *data;
    const size_t *dims;
    int rank;
    tensor_dtype dtype;
    const char *neg_inf;
    struct attn_stop *stop;
} encode_numbers_job;

static void encode_rows_span(const void *ctx, buf *out, size_t r0, size_t r1)
{
    const encode_numbers_job *job = ctx;
    encode_rows(out, job->data, job->dims, job->rank, r0, r1, job->dtype,
                job->neg_inf, job->stop);
}

void encode_tensor(buf_chain *out, pool *workers, struct attn_stop *stop,
                   const void *data, const size_t *dims, int rank,
                   tensor_dtype dtype, const char *neg_inf)
{
    size_t rows = 1;
    for (int i = 0; i < rank - 1; i++)
        rows *= dims[i];
    if (!workers || rows < ENCODE_PIECES ||
        rows * dims[rank - 1] < ENCODE_PARALLEL_MIN) {
        encode_rows(buf_chain_tail(out), data, dims, rank, 0, rows, dtype,
                    neg_inf, stop);
        return;
    }
    encode_numbers_job job = {.data = data,
                              .dims = dims,
                              .rank = rank,
                              .dtype = dtype,
                              .neg_inf = neg_inf,
                              .stop = stop};
    encode_in_pieces(out, workers, rows, dims[rank - 1] * ENCODE_TYPICAL + 8, 0,
                     encode_rows_span, &job);
}

/* Numbers [n0, n1) of a flat list, each but the list's first after a
 * comma, in runs of ENCODE_STOP_EVERY: ends early, the text incomplete,
 * once stop is cancelled (read before each run). */
static void encode_run(buf *out, const char *data, size_t n0, size_t n1,
                       tensor_dtype dtype, const char *neg_inf,
                       struct attn_stop *stop)
{
    size_t elem = tensor_dtype_size(dtype);
    for (size_t at = n0; at < n1; at += ENCODE_STOP_EVERY) {
        if (attn_stop_cancelled(stop))
            return;
        size_t end = n1 - at < ENCODE_STOP_EVERY ? n1 : at + ENCODE_STOP_EVERY;
        if (at)
            buf_append(out, ",", 1);
        encode_numbers(out, data + at * elem, end - at, dtype, neg_inf);
    }
}

/* A flat list of a large tensor's numbers, cut into ENCODE_PIECES runs
 * written by the workers; piece i > 0 starts with its comma. */
static void encode_flat_span(const void *ctx, buf *out, size_t n0, size_t n1)
{
    const encode_numbers_job *job = ctx;
    encode_run(out, job->data, n0, n1, job->dtype, job->neg_inf, job->stop);
}

void encode_flat(buf_chain *out, pool *workers, struct attn_stop *stop,
                 const void *data, size_t count, tensor_dtype dtype,
                 const char *neg_inf)
{
    buf_append(buf_chain_tail(out), "[", 1);
    if (!workers || count < ENCODE_PARALLEL_MIN) {
        encode_run(buf_chain_tail(out), data, 0, count, dtype, neg_inf, stop);
    } else { /* every piece holds numbers: count ≥ ENCODE_PIECES */
        encode_numbers_job job = {
            .data = data, .dtype = dtype, .neg_inf = neg_inf, .stop = stop};
        encode_in_pieces(out, workers, count, ENCODE_TYPICAL, 1,
                         encode_flat_span, &job);
    }
    buf_append(buf_chain_tail(out), "]", 1);
}

void encode_shape(buf *out, const size_t *dims, int rank)
{
    buf_append(out, "[", 1);
    for (int i = 0; i < rank; i++) {
        if (i)
            buf_append(out, ",", 1);
        buf_uint(out, dims[i]);
    }
    buf_append(out, "]", 1);
}

void encode_tensor_binary(buf *out, const void *data, const size_t *dims,
                          int rank, api_wire wire)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the binary encoding writes memory as little-endian"
#endif
    size_t count = 1;
    for (int i = 0; i < rank; i++)
        count *= dims[i];
    size_t bytes = count * api_wire_size(wire);
    buf narrow = {0}; /* a 16-bit type's bytes, from the floats */
    if (api_wire_size(wire) == HALF_SIZE) {
        half_append(&narrow, wire, data, count);
        if (narrow.len != bytes) {
            buf_free(&narrow);
            out->failed = true;
            return;
        }
        data = narrow.data;
    }
    buf_puts(out, "{\"shape\":");
    encode_shape(out, dims, rank);
    buf_puts(out, ",\"base64\":\"");
    size_t text = base64_encoded_size(bytes);
    if (buf_reserve(out, text + 3)) {
        base64_encode(data, bytes, out->data + out->len);
        out->len += text;
        buf_puts(out, "\"}");
    }
    buf_free(&narrow);
}
