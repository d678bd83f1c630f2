/*
 * heads.c - the reply cut down to the heads a request names (heads.h).
 */
#include "server/request/heads.h"

#include "server/request/batch_first.h"

#include "core/tensor.h"

#include <stdlib.h>
#include <string.h>

/* A stage of one sequence has a head axis exactly when it is (heads, rows,
 * width): q, k, v and their rotations, the cache, the (h, n, m) stages and
 * the head outputs; x_pe, concat and output are (rows, width). */
#define HEADS_STAGE_RANK 3

/* The head axis's index in stage s's shape, or −1 when it has none. */
static int head_axis(const attn_problem *p, attn_stage s)
{
    size_t dims[ATTN_MAX_RANK];
    int lead = p->batch ? 1 : 0;
    int rank = attn_stage_shape(p, s, dims);
    return rank - lead == HEADS_STAGE_RANK ? lead : -1;
}

int api_stage_shape(const api_request *req, attn_stage s,
                    size_t dims[ATTN_MAX_RANK])
{
    int rank = attn_stage_shape(&req->problem, s, dims);
    int axis = head_axis(&req->problem, s);
    if (req->head_count && axis >= 0)
        dims[axis] = req->head_count;
    if (req->average_weights && s == ATTN_WEIGHTS) {
        for (int i = axis; i + 1 < rank; i++)
            dims[i] = dims[i + 1];
        rank--;
    }
    if (batch_first_swapped(req, s)) {
        size_t sequences = dims[0];
        dims[0] = dims[1];
        dims[1] = sequences;
    }
    return rank;
}

/* (sequences, heads, n·m) weights → (sequences, n·m), each the mean over
 * the heads (summed in double, in head order). */
static bool average_weights(const api_request *req, attn_result *result)
{
    const attn_problem *p = &req->problem;
    size_t dims[ATTN_MAX_RANK];
    attn_stage_shape(p, ATTN_WEIGHTS, dims);
    int axis = head_axis(p, ATTN_WEIGHTS);
    size_t sequences = p->batch ? p->batch : 1;
    size_t heads = req->head_count ? req->head_count : dims[axis];
    size_t plane = dims[axis + 1] * dims[axis + 2];
    bool f32 = p->dtype == TENSOR_FLOAT32;
    char *mean = malloc(sequences * plane * tensor_dtype_size(p->dtype) + 1);
    if (!mean)
        return false;
    for (size_t b = 0; b < sequences; b++)
        for (size_t i = 0; i < plane; i++) {
            double sum = 0;
            for (size_t hd = 0; hd < heads; hd++) {
                size_t at = (b * heads + hd) * plane + i;
                sum += f32 ? ((const float *)result->stage[ATTN_WEIGHTS])[at]
                           : ((const double *)result->stage[ATTN_WEIGHTS])[at];
            }
            if (f32)
                ((float *)mean)[b * plane + i] = (float)(sum / (double)heads);
            else
                ((double *)mean)[b * plane + i] = sum / (double)heads;
        }
    free(result->stage[ATTN_WEIGHTS]);
    result->stage[ATTN_WEIGHTS] = mean;
    return true;
}

bool api_select_heads(const api_request *req, attn_result *result)
{
    const attn_problem *p = &req->problem;
    size_t elem = tensor_dtype_size(p->dtype);
    size_t h = p->heads, h_kv = attn_kv_heads(p);
    char *cut[ATTN_STAGE_COUNT] = {0};
    for (int s = 0; req->head_count && s < ATTN_STAGE_COUNT; s++) {
        int axis = head_axis(p, (attn_stage)s);
        if (!result->stage[s] || axis < 0)
            continue;
        size_t dims[ATTN_MAX_RANK];
        attn_stage_shape(p, (attn_stage)s, dims);
        /* (sequences, stage heads, plane): the core allocated the whole,
         * so these products do not overflow */
        size_t sequences = p->batch ? p->batch : 1, heads = dims[axis];
        size_t plane = dims[axis + 1] * dims[axis + 2] * elem;
        cut[s] = malloc(sequences * req->head_count * plane + 1);
        if (!cut[s]) {
            for (int t = 0; t < s; t++)
                free(cut[t]);
            return false;
        }
        const char *whole = result->stage[s];
        for (size_t b = 0; b < sequences; b++)
            for (size_t j = 0; j < req->head_count; j++) {
                /* a stage of h_kv heads holds the key/value head of
                 * heads[j] (the same index when h_kv = h) */
                size_t from =
                    heads == h ? req->heads[j] : req->heads[j] * h_kv / h;
                memcpy(cut[s] + (b * req->head_count + j) * plane,
                       whole + (b * heads + from) * plane, plane);
            }
    }
    for (int s = 0; s < ATTN_STAGE_COUNT; s++)
        if (cut[s]) {
            free(result->stage[s]);
            result->stage[s] = cut[s];
        }
    batch_first_outputs(req, result);
    return !req->average_weights || !result->stage[ATTN_WEIGHTS] ||
           average_weights(req, result);
}
