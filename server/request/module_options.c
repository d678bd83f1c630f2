/*
 * module_options.c - add_bias_kv and add_zero_attn refused
 * (module_options.h).
 */
#include "server/request/module_options.h"

bool module_options_check(const api_fields *fields, codec_error *err)
{
    char ptr[CODEC_POINTER_MAX];
    static const api_field biases[2] = {API_BIAS_K, API_BIAS_V};
    for (int i = 0; i < 2; i++)
        if (fields->tensor[biases[i]].present)
            return codec_fail(
                err, ERR_UNSUPPORTED_OPTION, schema_pointer(biases[i], ptr),
                "%s is add_bias_kv's, which the server does not compute (a "
                "learned key and value appended to every sequence after the "
                "projections): send q, k and v, the projections with bias_k "
                "and bias_v appended as one more key and value, or a module "
                "built without add_bias_kv",
                api_schema[biases[i]].name);
    const schema_value *zero = &fields->value[API_ADD_ZERO_ATTN];
    if (zero->present && zero->boolean)
        return codec_fail(err, ERR_UNSUPPORTED_OPTION,
                          schema_pointer(API_ADD_ZERO_ATTN, ptr),
                          "add_zero_attn is not computed by the server (a "
                          "zero key and value appended to every sequence "
                          "after the projections): send q, k and v with "
                          "that key and value appended, or leave it false");
    return true;
}
