/*
 * decode_value.h - one field that is not a tensor, read by its schema row's
 * kind (integer, number, boolean, choice, stages, labels) with the limits,
 * codes and messages of that row.
 *
 * decode.c reads every such member of a /v1/attention body with it; the
 * Open Inference Protocol's reader (oip_decode.c) reads its request
 * parameters with it, so both refuse a value in the same words.
 */
#ifndef SERVER_JSON_DECODE_VALUE_H
#define SERVER_JSON_DECODE_VALUE_H

#include "server/base/service_limits.h"
#include "server/request/codec_error.h"
#include "server/request/schema.h"

#include <jansson.h>
#include <stdbool.h>

/* Reads v as field f (not a tensor row) into out and marks it present;
 * pointer is where v sits in the body, for the error.  Labels read into
 * out are owned by it (api_fields_free()). */
bool decode_value(api_field f, json_t *v, const char *pointer,
                  const request_limits *limits, schema_value *out,
                  codec_error *err);

#endif
