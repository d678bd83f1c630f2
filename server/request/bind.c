#include "server/request/bind.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The value of row's field, by its binding's converter, at `to`. */
static void bind_value(const schema_field *row, const schema_value *v, char *to)
{
    const schema_binding *b = &row->bind;
    switch (b->as) {
    case SCHEMA_BIND_FLAG: {
        bool on = !v->present                   ? b->absent != 0
                  : row->kind == SCHEMA_BOOLEAN ? v->boolean
                                                : v->choice != 0;
        memcpy(to, &on, sizeof on);
        break;
    }
    case SCHEMA_BIND_DTYPE: {
        api_wire wire = (api_wire)(v->present ? v->choice : (int)b->absent);
        tensor_dtype dtype = api_wire_computed(wire);
        memcpy(to, &wire, sizeof wire);
        memcpy(to - b->to + b->view, &dtype, sizeof dtype);
        break;
    }
    case SCHEMA_BIND_STAGES: {
        unsigned stages = v->present ? v->stages : (unsigned)b->absent;
        memcpy(to, &stages, sizeof stages);
        break;
    }
    case SCHEMA_BIND_COUNT: {
        size_t count = !v->present           ? (size_t)b->absent
                       : v->number > b->most ? (size_t)b->most + 1
                                             : (size_t)v->number;
        memcpy(to, &count, sizeof count);
        break;
    }
    case SCHEMA_BIND_NUMBER: {
        double number = v->present ? v->number : b->absent;
        memcpy(to, &number, sizeof number);
        break;
    }
    case SCHEMA_BIND_NONE:
    case SCHEMA_BIND_NUMBERS:
        break;
    }
}

void bind_values(const api_fields *fields, api_request *req)
{
    for (int f = 0; f < API_FIELD_COUNT; f++)
        bind_value(&api_schema[f], &fields->value[f],
                   (char *)req + api_schema[f].bind.to);
}

bool bind_numbers(api_fields *fields, api_field f, tensor_dtype dtype,
                  void **out, codec_error *err)
{
    schema_tensor *t = &fields->tensor[f];
    if (t->is_float32 == (dtype == TENSOR_FLOAT32)) { /* already the dtype */
        *out = t->data;
        t->data = NULL;
        return true;
    }
    size_t count = schema_element_count(t);
    void *typed = malloc(count * tensor_dtype_size(dtype) + 1);
    if (!typed)
        return codec_fail(err, ERR_OUT_OF_MEMORY, NULL, "out of memory");
    for (size_t i = 0; i < count; i++) {
        double wide = schema_number(t, i);
        if (dtype == TENSOR_FLOAT64) {
            ((double *)typed)[i] = wide;
            continue;
        }
        float narrow = (float)wide;
        ((float *)typed)[i] = narrow;
        if (isinf(narrow) &&
            !(api_schema[f].minus_infinity && wide == -INFINITY)) {
            char ptr[CODEC_POINTER_MAX];
            schema_element_pointer(ptr, f, t, i);
            free(typed);
            return codec_fail(err, ERR_NUMBER_OUT_OF_RANGE, ptr,
                              "%g does not fit in float32 (largest %g)", wide,
                              (double)FLT_MAX);
        }
    }
    *out = typed;
    return true;
}

bool bind_tensor(api_fields *fields, api_field f, api_request *req,
                 codec_error *err)
{
    const schema_binding *b = &api_schema[f].bind;
    void *numbers;
    if (!bind_numbers(fields, f, req->problem.dtype, &numbers, err))
        return false;
    const void *view = numbers;
    memcpy((char *)req + b->to, &numbers, sizeof numbers);
    memcpy((char *)req + b->view, &view, sizeof view);
    return true;
}
