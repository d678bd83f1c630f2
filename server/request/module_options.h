/*
 * module_options.h - nn.MultiheadAttention's options the server does not
 * compute, refused with 422 unsupported_option and what to send instead:
 * add_bias_kv (its state_dict's bias_k and bias_v) and add_zero_attn.
 *
 * Each appends a key and a value to every sequence after the projections
 * (a learned one, a zero one), and the module's weights and masks then
 * have one or two columns more.  The core's keys are the context's
 * projections (after a KV cache's); rather than a form that matches the
 * module in most places, the server refuses them and says how to send the
 * same attention as q, k and v.
 */
#ifndef SERVER_REQUEST_MODULE_OPTIONS_H
#define SERVER_REQUEST_MODULE_OPTIONS_H

#include "server/request/codec_error.h"
#include "server/request/schema.h"

#include <stdbool.h>

/* False with 422 unsupported_option when fields ask for one of them
 * (add_zero_attn false is the module's default and fine). */
bool module_options_check(const api_fields *fields, codec_error *err);

#endif
