/*
 * bind.h - where each field's value lands in api_request, as its schema
 * row's binding says (schema.h): the values all at once before the rules
 * run, a tensor when the rule that checked its shape takes it.
 */
#ifndef SERVER_REQUEST_BIND_H
#define SERVER_REQUEST_BIND_H

#include "server/request/codec_error.h"
#include "server/request/request.h"
#include "server/request/schema.h"

#include <stdbool.h>

/* Every field whose row binds a value (not a tensor): its value, or the
 * row's `absent` when the request leaves it out, at its member of req. */
void bind_values(const api_fields *fields, api_request *req);

/* The numbers of field f in dtype, into *out (owned by the caller):
 * float64 moves the buffer, float32 narrows every number and refuses one
 * that does not fit (number_out_of_range at it). */
bool bind_numbers(api_fields *fields, api_field f, tensor_dtype dtype,
                  void **out, codec_error *err);

/* Field f's tensor (a row binding SCHEMA_BIND_NUMBERS) in the request's
 * dtype, at its member of req and the core's view of it. */
bool bind_tensor(api_fields *fields, api_field f, api_request *req,
                 codec_error *err);

#endif
