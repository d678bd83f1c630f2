/*
 * batch_first.c - sequence-first batches in and out (batch_first.h).
 */
#include "server/request/batch_first.h"

#include "core/tensor.h"

#include <string.h>

/* Swaps two rows of `bytes` bytes, a block at a time. */
static void swap_rows(char *a, char *b, size_t bytes)
{
    char block[256];
    for (size_t at = 0; at < bytes; at += sizeof block) {
        size_t len = bytes - at < sizeof block ? bytes - at : sizeof block;
        memcpy(block, a + at, len);
        memcpy(a + at, b + at, len);
        memcpy(b + at, block, len);
    }
}

void batch_first_transpose(void *rows, size_t a, size_t b, size_t row_bytes)
{
    size_t count = a * b;
    if (a < 2 || b < 2)
        return; /* the same order either way */
    char *base = rows;
    /* row k = i·b + j goes to j·a + i = k·a mod (count − 1); the last row
     * stays.  A cycle is moved from its smallest member, its leader. */
    size_t last = count - 1;
    for (size_t start = 1; start < last; start++) {
        size_t next = start * a % last;
        while (next > start)
            next = next * a % last;
        if (next != start)
            continue; /* a smaller member leads this cycle */
        /* start holds each row of the cycle in turn, swapped to where the
         * row before it belongs */
        for (next = start * a % last; next != start; next = next * a % last)
            swap_rows(base + start * row_bytes, base + next * row_bytes,
                      row_bytes);
    }
}

/* t (L, N, E) → (N, L, E), its dims too. */
static void to_batch_first(schema_tensor *t)
{
    size_t elem = t->is_float32 ? sizeof(float) : sizeof(double);
    batch_first_transpose(t->data, t->dims[0], t->dims[1], t->dims[2] * elem);
    size_t sequences = t->dims[1];
    t->dims[1] = t->dims[0];
    t->dims[0] = sequences;
}

bool batch_first_inputs(api_fields *fields, codec_error *err)
{
    const schema_value *v = &fields->value[API_BATCH_FIRST];
    char ptr[CODEC_POINTER_MAX];
    const char *named = schema_torch_name_given(fields);
    /* the module's default is sequence first and ours batch first: a batch
     * in the module's terms says which, or (L, N, E) would be read as
     * (N, L, E) without a word */
    if (!v->present && named && fields->tensor[API_X].rank == 3)
        return codec_fail(err, ERR_MISSING_FIELD,
                          schema_pointer(API_BATCH_FIRST, ptr),
                          "batch_first is required with a batch in PyTorch's "
                          "names (%s): nn.MultiheadAttention takes (L, N, E) "
                          "by default and this API (N, L, E); send the "
                          "module's batch_first",
                          named);
    if (!v->present)
        return true;
    if (fields->tensor[API_Q].present || fields->tensor[API_K].present ||
        fields->tensor[API_V].present)
        return codec_fail(err, ERR_CONFLICTING_FIELDS,
                          schema_pointer(API_BATCH_FIRST, ptr),
                          "batch_first is nn.MultiheadAttention's; q, k and "
                          "v are (N, h, L, E) as scaled_dot_product_attention "
                          "takes them");
    if (v->boolean)
        return true;
    static const api_field inputs[2] = {API_X, API_CONTEXT};
    for (int i = 0; i < 2; i++) {
        schema_tensor *t = &fields->tensor[inputs[i]];
        if (t->present && t->rank == 3)
            to_batch_first(t);
    }
    return true;
}

bool batch_first_swapped(const api_request *req, attn_stage s)
{
    return !req->batch_first && req->problem.batch &&
           (s == ATTN_X_PE || s == ATTN_CONCAT || s == ATTN_OUTPUT);
}

int batch_first_input_shape(const api_request *req, size_t rows, size_t width,
                            size_t dims[3])
{
    size_t batch = req->problem.batch;
    if (!batch) {
        dims[0] = rows, dims[1] = width;
        return 2;
    }
    dims[0] = req->batch_first ? batch : rows;
    dims[1] = req->batch_first ? rows : batch;
    dims[2] = width;
    return 3;
}

void batch_first_outputs(const api_request *req, attn_result *result)
{
    const attn_problem *p = &req->problem;
    for (int s = 0; s < ATTN_STAGE_COUNT; s++) {
        if (!result->stage[s] || !batch_first_swapped(req, (attn_stage)s))
            continue;
        size_t dims[ATTN_MAX_RANK];
        attn_stage_shape(p, (attn_stage)s, dims); /* (N, L, width) */
        batch_first_transpose(result->stage[s], dims[0], dims[1],
                              dims[2] * tensor_dtype_size(p->dtype));
    }
}
