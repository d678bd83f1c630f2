/*
 * tensor.h - element types and overflow-checked size arithmetic.
 *
 * The core moves plain row-major arrays around; a tensor is a pointer, a
 * dtype and the dimensions the caller passes beside it.  Every size that is
 * derived from client-supplied dimensions goes through tensor_mul_size() so
 * that an absurd shape is rejected before anything is allocated.
 */
#ifndef CORE_TENSOR_H
#define CORE_TENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum { TENSOR_FLOAT64 = 0, TENSOR_FLOAT32 = 1 } tensor_dtype;

static inline size_t tensor_dtype_size(tensor_dtype dtype)
{
    return dtype == TENSOR_FLOAT32 ? sizeof(float) : sizeof(double);
}

static inline const char *tensor_dtype_name(tensor_dtype dtype)
{
    return dtype == TENSOR_FLOAT32 ? "float32" : "float64";
}

/* *out = a * b; false (and *out untouched) when the product overflows. */
static inline bool tensor_mul_size(size_t a, size_t b, size_t *out)
{
    if (a != 0 && b > SIZE_MAX / a)
        return false;
    *out = a * b;
    return true;
}

/* *acc += a * b; false when either step overflows. */
static inline bool tensor_mul_add_size(size_t *acc, size_t a, size_t b)
{
    size_t prod;
    if (!tensor_mul_size(a, b, &prod) || prod > SIZE_MAX - *acc)
        return false;
    *acc += prod;
    return true;
}

#endif
