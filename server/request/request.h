/*
 * request.h - a decoded, validated POST /v1/attention request: the core's
 * problem and what the reply needs besides it.  Plain C data: the encoder and
 * the endpoint depend on this type, not on a JSON library.
 */
#ifndef SERVER_REQUEST_REQUEST_H
#define SERVER_REQUEST_REQUEST_H

#include "core/attention.h"
#include "core/tensor.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The type a request's numbers travel in, both ways ("dtype"; /v2's
 * datatype): the core's float64 or float32, or a 16-bit type (half.h) that
 * the core computes in float32, which holds each of its values exactly. */
typedef enum {
    API_WIRE_FLOAT64 = TENSOR_FLOAT64,
    API_WIRE_FLOAT32 = TENSOR_FLOAT32,
    API_WIRE_FLOAT16,
    API_WIRE_BFLOAT16
} api_wire;

/* Bytes of one number of wire in a binary form. */
static inline size_t api_wire_size(api_wire wire)
{
    return wire == API_WIRE_FLOAT64 ? 8 : wire == API_WIRE_FLOAT32 ? 4 : 2;
}

/* The dtype the core computes a request of wire in. */
static inline tensor_dtype api_wire_computed(api_wire wire)
{
    return wire == API_WIRE_FLOAT64 ? TENSOR_FLOAT64 : TENSOR_FLOAT32;
}

/* "float64", "float32", "float16" or "bfloat16". */
static inline const char *api_wire_name(api_wire wire)
{
    static const char *const names[] = {"float64", "float32", "float16",
                                        "bfloat16"};
    return names[wire];
}

/* Labels of the rows of a tensor ("tokens"): count strings, each malloc'd;
 * in a batch maybe one list per sequence, stored one after the other. */
typedef struct {
    char **names; /* NULL when the request gave none */
    size_t count;
    size_t lists; /* 0: one list; else that many of count / lists each */
} api_labels;

typedef struct {
    attn_problem problem;      /* points into the buffers below           */
    api_wire wire;             /* the numbers' type on the wire ("dtype") */
    unsigned want;             /* ATTN_WANT() bits from "return"          */
    bool binary;               /* "encoding": "base64": tensors as base64 */
    double scale;              /* the effective scale (1/√d_k by default) */
    api_labels tokens;         /* n labels, or none                       */
    api_labels context_tokens; /* m_new labels (context's rows), or none */
    void *x, *context, *w_q, *w_k, *w_v, *w_o, *bias;
    void *b_q, *b_k, *b_v, *b_o;
    void *q, *k, *v;       /* given directly (per head), or NULL */
    void *past_k, *past_v; /* a KV cache, or NULL */
    int64_t *positions, *context_positions; /* or NULL: 0, 1, ... */
    double *alibi_slopes;                   /* h, or NULL */
    size_t *heads;     /* the query heads the reply holds (heads.h) */
    size_t head_count; /* 0: every head */
    /* "average_attn_weights": weights averaged over the heads the reply
     * holds, (n, m) per sequence, as nn.MultiheadAttention returns them */
    bool average_weights;
    /* "batch_first": false returns a batch's x_pe, concat and output
     * sequence first, (n, B, width), as x came (batch_first.h) */
    bool batch_first;
    uint8_t *allow, *key_padding;
    /* bytes the rules made beside the body's numbers (masks.h), charged to
     * the parse account of the thread that decoded it */
    size_t parse_held;
} api_request;

/* Frees what req owns and empties it (safe on an empty request). */
void api_request_free(api_request *req);

void api_labels_free(api_labels *labels);

#ifdef __cplusplus
}
#endif

#endif
