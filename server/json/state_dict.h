/*
 * state_dict.h - the "state_dict" member: nn.MultiheadAttention's
 * state_dict() posted as it is, its keys under the one prefix a module
 * inside a model gives them ("encoder.layers.0.self_attn.in_proj_weight").
 *
 * Each key, less that prefix, is a row flagged SCHEMA_STATE_DICT_KEY
 * (in_proj_weight, in_proj_bias, q_proj_weight, k_proj_weight,
 * v_proj_weight, out_proj.weight, out_proj.bias, bias_k, bias_v); its value
 * becomes that row's tensor, as if sent as a field, and errors point into
 * the member ("/state_dict/encoder.layers.0.self_attn.in_proj_weight/3").
 * Keys under two prefixes (two modules' weights), a key of no such row, or
 * a tensor given both here and as a field: refused.
 */
#ifndef SERVER_JSON_STATE_DICT_H
#define SERVER_JSON_STATE_DICT_H

#include "server/request/codec_error.h"
#include "server/request/schema.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* The key each field came under in state_dict (a string of the envelope),
 * or NULL. */
typedef struct {
    const char *key[API_FIELD_COUNT];
} state_dict_keys;

/* Moves the envelope's state_dict (if any) into fields' tensors, its
 * numbers within max_elements with the tensors parsed before it. */
bool state_dict_take(json_t *envelope, size_t max_elements, api_fields *fields,
                     state_dict_keys *keys, codec_error *err);

/* An error a later rule blamed on a field that came in state_dict, pointed
 * at its key there ("/in_proj_weight/0" → "/state_dict/<key>/0"). */
void state_dict_repoint(const state_dict_keys *keys, codec_error *err);

#endif
