/*
 * fuzz_request.c - libFuzzer harness over the whole POST /v1/attention path
 * that runs off the event thread: decode + validate (server/json/), the
 * forward pass (core/), the encoder and the problem+json builder.
 *
 * DESIGN
 * Each input is a request body.  The harness checks properties that must hold
 * for every body, not only "does not crash":
 *   1. api_attention() answers 200, 400, 413, 422 or 503 (never anything
 *      else), with a body that is strict JSON (jansson refuses NaN/Infinity,
 *      so a non-finite number on the wire fails here);
 *   2. a 200 is application/json with "dtype" and "shapes"; an error is
 *      application/problem+json whose "status" equals the HTTP status, with
 *      string "code", "title" and "detail";
 *   3. a "pointer" in a 400 (other than for a missing field) resolves to a
 *      value of the request document (RFC 6901): the client is pointed at a
 *      field that exists (a number beyond a double, which jansson refuses
 *      to read, counts as a value there);
 *   4. decode_request() alone agrees with the reply: it fails exactly when
 *      the reply is a decode error (same status);
 *   5. on accepted requests with moderate numbers, the fast forward pass
 *      (BLAS, pool) and the textbook reference agree stage by stage within a
 *      tolerance derived from the input magnitudes;
 *   6. the fast parser path (decode_request, simdjson) and the jansson-only
 *      decoder give the same verdict: same status, code and pointer on a
 *      rejection, the same shapes and bit-identical tensors on acceptance;
 *   7. so does the fast path with every number tensor split into rows and
 *      parsed on the pool (decode_request with split_min_bytes 0,
 *      server/json/parse_rows.cpp), which the server does only for big tensors.
 * An input that starts with "v2 " is an Open Inference Protocol inference
 * request instead: "v2 <Inference-Header-Content-Length or ->\n<body>", the
 * body being the JSON and the binary tensor data after it.  For those:
 *   8. api_oip_infer() answers 200, 400, 413, 422 or 503; an error is the
 *      protocol's {"error", "code"} whose pointer, if any (but for a missing
 *      member), resolves in the request's JSON; a 200 lists its outputs with
 *      shapes whose data (JSON, or binary_data_size bytes after the JSON,
 *      which Inference-Header-Content-Length then measures) has exactly
 *      that many numbers;
 *   9. oip_decode() alone agrees with the reply, and what it accepts passes
 *      property 5 like a /v1 request;
 *  10. oip_decode() (simdjson when it can vouch, server/oip/oip_fast.cpp)
 *      and oip_decode_jansson() give the same verdict, and on acceptance the
 *      same request, bit for bit.
 * Limits are tightened (FUZZ_* below) so each input runs in well under a
 * millisecond and the fuzzer explores shapes rather than big matrices.
 */
#include "core/attention.h"
#include "core/pool.h"
#include "server/api/attention.h"
#include "server/setup/blas_setup.h"
#include "server/api/endpoint.h"
#include "server/json/decode.h"
#include "server/oip/oip_codec.h"
#include "server/base/reply.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/unit/join_parts.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bodies beyond this are not interesting to the decoder (the HTTP layer
 * caps bodies before they reach it). */
#define FUZZ_MAX_BODY 8192
/* Shape limits: small enough that any accepted request computes in
 * microseconds, large enough to cross the core's row blocks (ATTN_ROW_BLOCK)
 * only rarely but to exercise every head/width combination. */
#define FUZZ_MAX_TOKENS 48
#define FUZZ_MAX_WIDTH 48
#define FUZZ_MAX_HEADS 8
#define FUZZ_MAX_ELEMENTS 4096
#define FUZZ_MAX_REQUEST_MEMORY ((size_t)4 << 20)
/* Workers of the pool: two, so parallel loops really run on two threads. */
#define FUZZ_THREADS 2
#define FUZZ_QUEUE 4
/* Above this bound on |scaled scores| rounding differences between the BLAS
 * and the textbook sums can legitimately flip a softmax; skip comparing. */
#define FUZZ_COMPARE_MAX_SCORE 1e4

static pool *workers;
/* in-flight memory budget as the server keeps it; far above what one input
 * needs, so every reservation fits and is released again */
static budget fuzz_memory;
static const request_limits limits = {
    .max_tokens = FUZZ_MAX_TOKENS,
    .max_width = FUZZ_MAX_WIDTH,
    .max_heads = FUZZ_MAX_HEADS,
    .max_elements = FUZZ_MAX_ELEMENTS,
    .max_request_memory = FUZZ_MAX_REQUEST_MEMORY,
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    blas_setup_single_threaded();
    json_object_seed(1); /* before any thread uses jansson */
    workers = pool_create(FUZZ_THREADS, FUZZ_QUEUE);
    budget_init(&fuzz_memory, (size_t)1 << 34);
    if (!workers)
        abort();
    return 0;
}

/* The code's name, for a message. */
static const char *code_name(error_code code)
{
    return error_code_info(code)->name;
}

/* RFC 6901: resolves pointer in doc, or NULL. */
static json_t *pointer_resolve(json_t *doc, const char *pointer)
{
    json_t *cur = doc;
    const char *p = pointer;
    while (*p) {
        if (*p != '/')
            return NULL;
        p++;
        char token[CODEC_POINTER_MAX];
        size_t len = 0;
        while (*p && *p != '/' && len + 1 < sizeof token) {
            if (p[0] == '~' && p[1] == '0')
                token[len++] = '~', p += 2;
            else if (p[0] == '~' && p[1] == '1')
                token[len++] = '/', p += 2;
            else
                token[len++] = *p++;
        }
        token[len] = '\0';
        if (json_is_object(cur)) {
            cur = json_object_get(cur, token);
        } else if (json_is_array(cur)) {
            char *end;
            unsigned long i = strtoul(token, &end, 10);
            if (*end || !len)
                return NULL;
            cur = json_array_get(cur, i);
        } else {
            return NULL;
        }
        if (!cur)
            return NULL;
    }
    return cur;
}

/* Bounds the numbers load_request() overwrites in one body: as many as a
 * body of FUZZ_MAX_BODY holds ("1e309," each). */
#define FUZZ_MAX_OVERFLOWS (FUZZ_MAX_BODY / 6 + 1)

/* The request as jansson reads it, for resolving a reply's pointer: a
 * number beyond a double, which jansson refuses and the server reports at
 * its pointer (number_out_of_range), is read as 0 here.  NULL when the
 * body is not JSON for another reason. */
static json_t *load_request(const char *data, size_t size)
{
    char *copy = malloc(size + 1);
    CHECK(copy, "out of memory");
    memcpy(copy, data, size);
    json_t *doc = NULL;
    for (int tries = 0; tries < FUZZ_MAX_OVERFLOWS; tries++) {
        json_error_t jerr;
        doc = json_loadb(copy, size, JSON_DECODE_INT_AS_REAL, &jerr);
        if (doc || json_error_code(&jerr) != json_error_numeric_overflow ||
            jerr.position <= 0 || (size_t)jerr.position > size)
            break;
        size_t end = (size_t)jerr.position, start = end;
        while (start > 0 && copy[start - 1] &&
               !strchr(",[{: \t\n\r", copy[start - 1]))
            start--;
        copy[start] = '0';
        memset(copy + start + 1, ' ', end - start - 1);
    }
    free(copy);
    return doc;
}

static void check_reply(const reply *out, const uint8_t *data, size_t size)
{
    unsigned s = out->status;
    CHECK(s == 200 || s == 400 || s == 413 || s == 422 || s == 503, "status %u",
          s);
    CHECK(out->body && out->body_len > 0, "empty reply body (status %u)", s);
    json_error_t jerr;
    json_t *doc =
        json_loadb(out->body, out->body_len, JSON_REJECT_DUPLICATES, &jerr);
    CHECK(doc, "reply is not strict JSON: %s (status %u): %.*s", jerr.text, s,
          (int)(out->body_len < 300 ? out->body_len : 300), out->body);
    CHECK(json_is_object(doc), "reply is not an object");
    if (s == 200) {
        CHECK(strcmp(out->content_type, "application/json") == 0, "%s",
              out->content_type);
        /* "output" only when asked for ("return"); shapes and dtype always */
        CHECK(json_is_string(json_object_get(doc, "dtype")), "no dtype");
        CHECK(json_is_object(json_object_get(doc, "shapes")), "no shapes");
    } else {
        CHECK(strcmp(out->content_type, "application/problem+json") == 0, "%s",
              out->content_type);
        json_t *st = json_object_get(doc, "status");
        CHECK(json_is_number(st) && json_number_value(st) == (double)s,
              "problem status field disagrees with %u", s);
        const char *code = json_string_value(json_object_get(doc, "code"));
        CHECK(code && *code, "problem without code");
        CHECK(json_is_string(json_object_get(doc, "title")), "no title");
        CHECK(json_is_string(json_object_get(doc, "detail")), "no detail");
        const char *ptr = json_string_value(json_object_get(doc, "pointer"));
        CHECK(!json_object_get(doc, "pointer") || ptr, "pointer not a string");
        if (ptr && *ptr && s == 400 && strcmp(code, "missing_field") != 0) {
            json_t *req = load_request((const char *)data, size);
            CHECK(req, "400 with a pointer for a body jansson cannot parse");
            CHECK(pointer_resolve(req, ptr),
                  "pointer %s (code %s) names no "
                  "value of the request",
                  ptr, code);
            json_decref(req);
        }
    }
    json_decref(doc);
}

/* max |a[i]| over count elements of dtype. */
static double max_abs(const void *a, size_t count, tensor_dtype dtype)
{
    double m = 0;
    for (size_t i = 0; i < count; i++) {
        double v = dtype == TENSOR_FLOAT32 ? (double)((const float *)a)[i]
                                           : ((const double *)a)[i];
        if (fabs(v) > m)
            m = fabs(v);
    }
    return m;
}

static size_t stage_count(const attn_problem *p, attn_stage s)
{
    size_t dims[ATTN_MAX_RANK], count = 1;
    int rank = attn_stage_shape(p, s, dims);
    for (int i = 0; i < rank; i++)
        count *= dims[i];
    return count;
}

/* Property 5: fast path == reference on moderate inputs. */
static void compare_with_reference(const api_request *req)
{
    const attn_problem *p = &req->problem;
    tensor_dtype t = p->dtype;
    size_t seqs = p->batch ? p->batch : 1, h = p->heads;
    size_t h_kv = attn_kv_heads(p), m_new = attn_new_keys(p);
    double bq, bk, bv;
    if (p->q) { /* given directly */
        bq = max_abs(p->q, seqs * h * p->n * p->d_k, t);
        bk = max_abs(p->k, seqs * h_kv * m_new * p->d_k, t);
        bv = max_abs(p->v, seqs * h_kv * m_new * p->d_v, t);
    } else {
        /* the sinusoidal encoding adds at most 1 to each number */
        double pe = p->sinusoidal ? 1 : 0;
        double bx = max_abs(p->x, seqs * p->n * p->d, t) + pe;
        double bc = p->context
                        ? max_abs(p->context, seqs * m_new * p->d_c, t) + pe
                        : bx;
        bq = (double)p->d * bx * max_abs(p->w_q, p->d * h * p->d_k, t) +
             (p->b_q ? max_abs(p->b_q, h * p->d_k, t) : 0);
        bk = (double)p->d_c * bc * max_abs(p->w_k, p->d_c * h_kv * p->d_k, t) +
             (p->b_k ? max_abs(p->b_k, h_kv * p->d_k, t) : 0);
        bv = (double)p->d_c * bc * max_abs(p->w_v, p->d_c * h_kv * p->d_v, t) +
             (p->b_v ? max_abs(p->b_v, h_kv * p->d_v, t) : 0);
    }
    if (p->rope_dims) { /* a turned pair's parts grow by at most √2 */
        bq *= 1.5;
        bk *= 1.5;
    }
    if (p->past) { /* the cache's keys and values are as sent */
        bk = fmax(bk, max_abs(p->past_k, seqs * h_kv * p->past * p->d_k, t));
        bv = fmax(bv, max_abs(p->past_v, seqs * h_kv * p->past * p->d_v, t));
    }
    size_t masks = p->mask_per_sequence ? seqs : 1;
    double bias = p->bias ? max_abs(p->bias, masks * p->n * p->m, t) : 0;
    double bscore = req->scale * (double)p->d_k * bq * bk + bias;
    if (!(bscore <= FUZZ_COMPARE_MAX_SCORE) ||
        !(bq <= FUZZ_COMPARE_MAX_SCORE) || !(bk <= FUZZ_COMPARE_MAX_SCORE) ||
        !(bv <= FUZZ_COMPARE_MAX_SCORE))
        return; /* a stage may overflow: the reference does not flag it */
    double bo = p->w_o ? (double)(h * p->d_v) *
                                 max_abs(p->w_o, h * p->d_v * p->d_out, t) +
                             (p->b_o ? max_abs(p->b_o, p->d_out, t) : 0)
                       : 1;
    double eps = t == TENSOR_FLOAT32 ? 1.2e-7 : 2.3e-16;
    /* every stage's error is bounded by a few units of rounding times the
     * largest magnitude any term reaches, times the longest sum */
    double width = (double)(p->d + p->d_c + p->m + p->heads * p->d_v + 8);
    double tol =
        64 * eps * width * (1 + bscore) * (1 + bq + bk + bv) * (1 + bo);

    unsigned all = (1u << ATTN_STAGE_COUNT) - 1;
    attn_result fast, ref;
    attn_status sf = attn_forward(workers, p, all, &fast);
    attn_status sr = attn_forward_reference(p, all, &ref);
    CHECK(sf == sr, "forward status %d, reference %d", sf, sr);
    if (sf == ATTN_OK) {
        for (int s = 0; s < ATTN_STAGE_COUNT; s++) {
            if (!attn_stage_applies(p, (attn_stage)s)) {
                CHECK(!fast.stage[s] && !ref.stage[s],
                      "stage %s computed without its feature",
                      attn_stage_name(s));
                continue;
            }
            CHECK(fast.stage[s] && ref.stage[s], "stage %s missing",
                  attn_stage_name(s));
            size_t count = stage_count(p, s);
            for (size_t i = 0; i < count; i++) {
                double a = t == TENSOR_FLOAT32
                               ? (double)((float *)fast.stage[s])[i]
                               : ((double *)fast.stage[s])[i];
                double b = t == TENSOR_FLOAT32
                               ? (double)((float *)ref.stage[s])[i]
                               : ((double *)ref.stage[s])[i];
                if (isinf(a) || isinf(b)) {
                    CHECK(a == b, "stage %s[%zu]: %g vs reference %g",
                          attn_stage_name(s), i, a, b);
                    continue;
                }
                CHECK(fabs(a - b) <= tol,
                      "stage %s[%zu]: %.17g vs reference "
                      "%.17g (tolerance %g)",
                      attn_stage_name(s), i, a, b, tol);
            }
        }
    }
    attn_result_free(&fast);
    attn_result_free(&ref);
}

static bool same_bytes(const void *a, const void *b, size_t bytes)
{
    if (!a || !b)
        return a == b;
    return memcmp(a, b, bytes) == 0;
}

static bool same_labels(const api_labels *a, const api_labels *b)
{
    if (a->count != b->count || a->lists != b->lists || !a->names != !b->names)
        return false;
    for (size_t i = 0; i < a->count; i++)
        if (strcmp(a->names[i], b->names[i]) != 0)
            return false;
    return true;
}

static void compare_requests(const char *which, const api_request *req,
                             const api_request *slow_req);

/* Properties 6 and 7: a fast decoder (named `which`) == decode_request()
 * with jansson alone. */
static void compare_parsers(const char *which, const char *body, size_t size,
                            bool ok, const api_request *req,
                            const codec_error *err)
{
    api_request slow;
    codec_error serr;
    decode_options jansson = {NULL, SIZE_MAX, true};
    bool sok = decode_request(body, size, &limits, &jansson, &slow, &serr);
    CHECK(sok == ok, "%s says %s, jansson decoder %s (%s)", which,
          ok ? "ok" : code_name(err->code), sok ? "ok" : code_name(serr.code),
          sok ? "" : serr.detail);
    if (!ok) {
        CHECK(serr.code == err->code && strcmp(serr.pointer, err->pointer) == 0,
              "%s: %s %s; jansson decoder: %s %s", which, code_name(err->code),
              err->pointer, code_name(serr.code), serr.pointer);
        return;
    }
    compare_requests(which, req, &slow);
    api_request_free(&slow);
}

/* Two decodings of one request hold the same problem, bit for bit. */
static void compare_requests(const char *which, const api_request *req,
                             const api_request *slow_req)
{
    const api_request slow = *slow_req;
    const attn_problem *a = &req->problem, *b = &slow.problem;
    CHECK(a->dtype == b->dtype && a->n == b->n && a->m == b->m &&
              a->d == b->d && a->d_c == b->d_c && a->heads == b->heads &&
              a->d_k == b->d_k && a->d_v == b->d_v && a->d_out == b->d_out &&
              a->causal == b->causal && req->want == slow.want &&
              memcmp(&req->scale, &slow.scale, sizeof req->scale) == 0 &&
              memcmp(&a->scale, &b->scale, sizeof a->scale) == 0,
          "%s and jansson disagree on shapes or options", which);
    CHECK(a->batch == b->batch && a->kv_heads == b->kv_heads &&
              a->mask_per_sequence == b->mask_per_sequence,
          "%s and jansson disagree on batch or key/value heads", which);
    CHECK(a->past == b->past && a->rope_dims == b->rope_dims &&
              memcmp(&a->rope_base, &b->rope_base, sizeof a->rope_base) == 0 &&
              a->rope_interleaved == b->rope_interleaved &&
              a->sinusoidal == b->sinusoidal,
          "%s and jansson disagree on the cache, RoPE or the encoding", which);
    size_t e = tensor_dtype_size(a->dtype), seqs = a->batch ? a->batch : 1;
    size_t h_kv = attn_kv_heads(a), hq = a->heads * a->d_k;
    size_t hk = h_kv * a->d_k, hv = h_kv * a->d_v, concat = a->heads * a->d_v;
    size_t masks = a->mask_per_sequence ? seqs : 1;
    size_t m_new = attn_new_keys(a);
    CHECK(same_bytes(a->x, b->x, seqs * a->n * a->d * e), "x differs");
    CHECK(same_bytes(a->context, b->context, seqs * m_new * a->d_c * e),
          "context differs");
    CHECK(same_bytes(a->q, b->q, seqs * a->n * hq * e) &&
              same_bytes(a->k, b->k, seqs * m_new * hk * e) &&
              same_bytes(a->v, b->v, seqs * m_new * hv * e),
          "q, k or v differ");
    CHECK(same_bytes(a->past_k, b->past_k, seqs * a->past * hk * e) &&
              same_bytes(a->past_v, b->past_v, seqs * a->past * hv * e),
          "past_k or past_v differ");
    CHECK(same_bytes(a->w_q, b->w_q, a->d * hq * e), "w_q differs");
    CHECK(same_bytes(a->w_k, b->w_k, a->d_c * hk * e), "w_k differs");
    CHECK(same_bytes(a->w_v, b->w_v, a->d_c * hv * e), "w_v differs");
    CHECK(same_bytes(a->w_o, b->w_o, concat * a->d_out * e), "w_o differs");
    CHECK(same_bytes(a->b_q, b->b_q, hq * e) &&
              same_bytes(a->b_k, b->b_k, hk * e) &&
              same_bytes(a->b_v, b->b_v, hv * e) &&
              same_bytes(a->b_o, b->b_o, a->d_out * e),
          "biases differ");
    CHECK(same_bytes(a->bias, b->bias, masks * a->n * a->m * e),
          "mask differs");
    CHECK(same_bytes(a->allow, b->allow, masks * a->n * a->m), "mask differs");
    CHECK(same_bytes(a->key_padding, b->key_padding, seqs * a->m),
          "key_padding differs");
    CHECK(same_labels(&req->tokens, &slow.tokens), "tokens differ");
    CHECK(same_labels(&req->context_tokens, &slow.context_tokens),
          "context_tokens differ");
}

/* An Open Inference Protocol input: "v2 " prefix, then the header's value
 * ("-": none) up to a newline, then the body. */
#define FUZZ_OIP_PREFIX "v2 "
/* Room for the header's value (a byte count; longer is refused). */
#define FUZZ_OIP_HEADER_MAX 32

/* The product of a JSON shape's dims, or SIZE_MAX. */
static size_t shape_count(json_t *shape)
{
    size_t count = 1;
    CHECK(json_is_array(shape), "an output without a shape array");
    for (size_t i = 0; i < json_array_size(shape); i++) {
        json_t *dim = json_array_get(shape, i);
        CHECK(json_is_integer(dim) && json_integer_value(dim) >= 0,
              "a dimension that is not a count");
        count *= (size_t)json_integer_value(dim);
    }
    return count;
}

/* Property 8 on the reply of an OIP request whose JSON is json[0, len). */
static void check_oip_reply(const reply *out, const char *json, size_t len)
{
    unsigned s = out->status;
    CHECK(s == 200 || s == 400 || s == 413 || s == 422 || s == 503, "status %u",
          s);
    size_t doc_len =
        out->json_header_len ? out->json_header_len : out->body_len;
    CHECK(doc_len <= out->body_len, "header length past the body");
    json_error_t jerr;
    json_t *doc = json_loadb(out->body, doc_len, JSON_REJECT_DUPLICATES, &jerr);
    CHECK(doc && json_is_object(doc), "reply is not a JSON object: %s (%u)",
          jerr.text, s);
    if (s != 200) {
        CHECK(strcmp(out->content_type, "application/json") == 0, "%s",
              out->content_type);
        const char *error = json_string_value(json_object_get(doc, "error"));
        const char *code = json_string_value(json_object_get(doc, "code"));
        CHECK(error && *error && code && *code, "an error without a message");
        const char *ptr = json_string_value(json_object_get(doc, "pointer"));
        if (ptr && *ptr && strcmp(code, "missing_field") != 0) {
            json_t *req = load_request(json, len);
            CHECK(req, "a pointer for a request jansson cannot parse");
            CHECK(pointer_resolve(req, ptr), "pointer %s (%s) names nothing",
                  ptr, code);
            json_decref(req);
        }
        json_decref(doc);
        return;
    }
    CHECK(strcmp(out->content_type, out->json_header_len
                                        ? "application/octet-stream"
                                        : "application/json") == 0,
          "%s", out->content_type);
    json_t *outputs = json_object_get(doc, "outputs");
    CHECK(json_is_array(outputs), "a reply without outputs");
    size_t binary = 0;
    for (size_t i = 0; i < json_array_size(outputs); i++) {
        json_t *o = json_array_get(outputs, i);
        const char *type = json_string_value(json_object_get(o, "datatype"));
        CHECK(type && (!strcmp(type, "FP64") || !strcmp(type, "FP32")), "%s",
              type ? type : "no datatype");
        size_t count = shape_count(json_object_get(o, "shape"));
        json_t *size = json_object_get(json_object_get(o, "parameters"),
                                       "binary_data_size");
        if (size) {
            size_t elem = strcmp(type, "FP64") == 0 ? 8 : 4;
            CHECK((size_t)json_integer_value(size) == count * elem,
                  "binary_data_size disagrees with the shape");
            binary += count * elem;
        } else {
            CHECK(json_array_size(json_object_get(o, "data")) == count,
                  "data disagrees with the shape");
        }
    }
    CHECK(binary == out->body_len - doc_len,
          "the binary outputs add up to %zu bytes, the body has %zu", binary,
          out->body_len - doc_len);
    json_decref(doc);
}

/* Properties 8 and 9 for an input in the "v2 " form. */
static void fuzz_oip(const char *input, size_t size)
{
    const char *newline = memchr(input, '\n', size);
    size_t head = newline ? (size_t)(newline - input) : size;
    if (!newline || head >= FUZZ_OIP_HEADER_MAX)
        return;
    char value[FUZZ_OIP_HEADER_MAX];
    memcpy(value, input, head);
    value[head] = '\0';
    const char *header = strcmp(value, "-") == 0 ? NULL : value;
    const char *body = newline + 1;
    size_t len = size - head - 1;

    reply out = {0};
    api_attention_stats stats = {0};
    api_job job = {.workers = workers,
                   .limits = &limits,
                   .memory = &fuzz_memory,
                   .body = len ? body : NULL,
                   .body_len = len,
                   .header = header,
                   .stats = &stats};
    api_oip_infer(&job, &out);
    CHECK(reply_join(&out), "could not join the reply's parts");
    size_t json_len;
    codec_error err;
    bool framed = oip_json_length(header, len, &json_len, &err);
    check_oip_reply(&out, body, framed ? json_len : len);

    api_request req;
    oip_reply_plan plan;
    bool ok =
        framed && oip_decode(body, len, json_len, &limits, &req, &plan, &err);
    if (framed) {
        api_request slow;
        oip_reply_plan slow_plan;
        codec_error serr;
        bool sok = oip_decode_jansson(body, len, json_len, &limits, &slow,
                                      &slow_plan, &serr);
        CHECK(sok == ok, "oip_decode says %s, with jansson alone %s",
              ok ? "ok" : code_name(err.code),
              sok ? "ok" : code_name(serr.code));
        if (ok) {
            compare_requests("oip fast reader", &req, &slow);
            CHECK(plan.output_count == slow_plan.output_count &&
                      memcmp(plan.outputs, slow_plan.outputs,
                             sizeof plan.outputs) == 0 &&
                      memcmp(plan.binary, slow_plan.binary,
                             sizeof plan.binary) == 0,
                  "the fast reader plans other outputs");
            api_request_free(&slow);
            oip_reply_plan_free(&slow_plan);
        }
    }
    if (!ok) {
        CHECK(error_code_info(err.code)->status == out.status,
              "decode says %s, reply %u", code_name(err.code), out.status);
        CHECK(err.code != ERR_NONE && err.detail[0],
              "decode error without code/detail");
    } else {
        CHECK(out.status == 200 || out.status == 422,
              "accepted request answered %u", out.status);
        compare_with_reference(&req);
        api_request_free(&req);
        oip_reply_plan_free(&plan);
    }
    reply_clear(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FUZZ_MAX_BODY)
        return 0;
    size_t prefix = strlen(FUZZ_OIP_PREFIX);
    if (size >= prefix && memcmp(data, FUZZ_OIP_PREFIX, prefix) == 0) {
        fuzz_oip((const char *)data + prefix, size - prefix);
        return 0;
    }
    /* the HTTP layer passes NULL for a request without a body, as here */
    const char *body = size ? (const char *)data : NULL;

    reply out = {0};
    api_attention_stats stats = {0};
    api_job job = {.workers = workers,
                   .limits = &limits,
                   .memory = &fuzz_memory,
                   .body = body,
                   .body_len = size,
                   .stats = &stats};
    api_attention(&job, &out);
    CHECK(reply_join(&out), "could not join the reply's parts");
    check_reply(&out, data, size);

    api_request req;
    codec_error err;
    api_request split;
    codec_error split_err;
    decode_options split_all = {workers, 0, false};
    bool split_ok =
        decode_request(body, size, &limits, &split_all, &split, &split_err);
    compare_parsers("row-split decoder", body, size, split_ok, &split,
                    &split_err);
    if (split_ok)
        api_request_free(&split);

    bool ok = decode_request(body, size, &limits, NULL, &req, &err);
    compare_parsers("fast decoder", body, size, ok, &req, &err);
    if (!ok) {
        CHECK(error_code_info(err.code)->status == out.status,
              "decode says %s, reply %u", code_name(err.code), out.status);
        CHECK(err.code != ERR_NONE && err.detail[0],
              "decode error without code/detail");
        CHECK(req.x == NULL && req.w_q == NULL && req.tokens.names == NULL,
              "a failed decode left buffers in the request");
    } else {
        CHECK(out.status == 200 || out.status == 422,
              "accepted request answered %u", out.status);
        compare_with_reference(&req);
        api_request_free(&req);
    }
    reply_clear(&out);
    return 0;
}
