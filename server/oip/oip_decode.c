/*
 * oip_decode.c - an Open Inference Protocol inference request → the same
 * api_fields the /v1 parsers fill → validate_request().
 *
 * DESIGN
 * The JSON header is parsed with jansson (it is small whenever the tensors
 * travel as binary data, the protocol's fast form).  Members are read in the
 * order a person fixes them: the request's parameters, its inputs (each
 * checked on its own: name, datatype, shape, then data or binary bytes:
 * oip_inputs.c, oip_binary.c), its outputs; then the rules between fields,
 * which are /v1's.  Every refusal is a codec_error whose pointer is into the
 * JSON header ("/inputs/2/shape") and whose message names the input or
 * parameter.
 */
#include "server/oip/oip_reader.h"
#include "server/json/whole_literals.h"

#include "server/base/parse_budget.h"
#include "server/json/decode_value.h"
#include "server/json/half.h"
#include "server/json/number_literal.h"
#include "server/json/parse_json.h"
#include "server/request/validate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the request's parameters ------------------------------------------- */

/* The protocol's own scheduling parameters, which tritonclient sends: a
 * whole number >= 0 each.  `priority` is accepted and without effect (one
 * model, one queue, no priorities); `timeout`, in microseconds, is the
 * request's deadline (oip_reply_plan.timeout_seconds). */
static const char *const scheduling_parameters[] = {"priority", "timeout"};

/* Whether key is one of them; false with err set when its value is not a
 * whole number >= 0. */
static bool is_scheduling_parameter(const char *key, json_t *value,
                                    const char *ptr, oip_reply_plan *plan,
                                    codec_error *err, bool *ok)
{
    for (size_t i = 0;
         i < sizeof scheduling_parameters / sizeof *scheduling_parameters;
         i++) {
        if (strcmp(key, scheduling_parameters[i]) != 0)
            continue;
        /* (a number may come as a real: the fast parser reads every one
         * as a double) */
        double v = json_number_value(value);
        *ok = json_is_number(value) && v >= 0 && v == floor(v);
        if (!*ok)
            codec_fail(err, ERR_WRONG_TYPE, ptr,
                       "%s must be a whole number >= 0", key);
        else if (strcmp(key, "timeout") == 0)
            plan->timeout_seconds = v * 1e-6;
        return true;
    }
    return false;
}

static bool is_tensor(api_field f)
{
    return api_schema[f].kind == SCHEMA_TENSOR;
}

/* The refusal of a parameter no field is: the field it most likely meant,
 * then every parameter and every input (a tensor given as a keyword to a
 * client travels as a parameter: W_o= for w_o). */
static bool unknown_parameter(const char *key, const char *ptr,
                              codec_error *err)
{
    char params[SCHEMA_LIST_MAX], inputs[SCHEMA_LIST_MAX], meant[96] = "";
    oip_field_names(params, schema_oip_parameter);
    oip_field_names(inputs, is_tensor);
    int f = schema_suggest(key, NULL);
    if (f >= 0)
        snprintf(meant, sizeof meant, "; did you mean %s\"%s\"?",
                 is_tensor((api_field)f) ? "the input " : "",
                 api_schema[f].name);
    return codec_fail(err, ERR_UNKNOWN_FIELD, ptr,
                      "unknown parameter \"%.64s\"%s (parameters are %s, "
                      "binary_data_output, priority, timeout; tensors are "
                      "inputs: %s)",
                      key, meant, params, inputs);
}

static bool read_parameters(oip_reader *rd, json_t *params,
                            oip_reply_plan *plan, codec_error *err)
{
    char ptr[CODEC_POINTER_MAX];
    if (!json_is_object(params)) {
        oip_pointer2(ptr, "parameters", NULL);
        return codec_fail(err, ERR_WRONG_TYPE, ptr,
                          "parameters must be an object of name: value");
    }
    const char *key;
    json_t *value;
    json_object_foreach(params, key, value)
    {
        oip_pointer2(ptr, "parameters", key);
        bool ok;
        if (is_scheduling_parameter(key, value, ptr, plan, err, &ok)) {
            if (!ok)
                return false;
            continue;
        }
        if (strcmp(key, "binary_data_output") == 0) {
            if (!json_is_boolean(value))
                return codec_fail(err, ERR_WRONG_TYPE, ptr,
                                  "binary_data_output must be true or false");
            rd->binary_output = json_is_true(value);
            continue;
        }
        int f = schema_field_of(key);
        if (f >= 0 && api_schema[f].kind == SCHEMA_TENSOR)
            return codec_fail(err, ERR_UNKNOWN_FIELD, ptr,
                              "%s is a tensor: send it as an input", key);
        if (f >= 0 && api_schema[f].oip_instead)
            return codec_fail(err, api_schema[f].invalid_code, ptr, "%s",
                              api_schema[f].oip_instead);
        if (f >= 0 && api_schema[f].kind == SCHEMA_LABELS)
            return codec_fail(err, ERR_WRONG_TYPE, ptr,
                              "%s is a list of labels, which a parameter "
                              "cannot hold; POST /v1/attention takes it",
                              key);
        if (f < 0)
            return unknown_parameter(key, ptr, err);
        if (!decode_value((api_field)f, value, ptr, rd->limits,
                          &rd->fields.value[f], err))
            return false;
    }
    return true;
}

/* ---- outputs ------------------------------------------------------------ */

static bool read_output(json_t *out, size_t i, oip_reply_plan *plan,
                        unsigned *want, bool binary_output, codec_error *err)
{
    char ptr[CODEC_POINTER_MAX], index[24];
    snprintf(index, sizeof index, "%zu", i);
    oip_pointer2(ptr, "outputs", index);
    if (!json_is_object(out))
        return codec_fail(err, ERR_WRONG_TYPE, ptr,
                          "an output is an object with a name");
    const char *key;
    json_t *value;
    json_object_foreach(out, key, value)
    {
        if (strcmp(key, "name") != 0 && strcmp(key, "parameters") != 0) {
            oip_pointer2(ptr, "outputs", index);
            oip_pointer_append(ptr, key);
            return codec_fail(err, ERR_UNKNOWN_FIELD, ptr,
                              "unknown member \"%.64s\" of an output "
                              "(members are name, parameters)",
                              key);
        }
    }
    oip_pointer2(ptr, "outputs", index);
    oip_pointer_append(ptr, "name");
    const char *name = json_string_value(json_object_get(out, "name"));
    int s = 0;
    while (name && s < ATTN_STAGE_COUNT &&
           strcmp(name, attn_stage_name((attn_stage)s)) != 0)
        s++;
    if (!name || s == ATTN_STAGE_COUNT) {
        char stages[SCHEMA_LIST_MAX];
        schema_stage_list(stages);
        return codec_fail(err, ERR_INVALID_RETURN, ptr,
                          "%s%.64s%s (outputs are %s)",
                          name ? "unknown output \"" : "an output needs a name",
                          name ? name : "", name ? "\"" : "", stages);
    }
    if (*want & ATTN_WANT(s))
        return codec_fail(err, ERR_CONFLICTING_FIELDS, ptr,
                          "output %s is asked for twice", name);
    *want |= ATTN_WANT(s);
    bool binary = binary_output;
    json_t *params = json_object_get(out, "parameters");
    oip_pointer2(ptr, "outputs", index);
    oip_pointer_append(ptr, "parameters");
    if (params && !json_is_object(params))
        return codec_fail(err, ERR_WRONG_TYPE, ptr,
                          "output %s: parameters must be an object", name);
    json_object_foreach(params, key, value)
    {
        oip_pointer2(ptr, "outputs", index);
        oip_pointer_append(ptr, "parameters");
        oip_pointer_append(ptr, key);
        if (strcmp(key, "binary_data") != 0)
            return codec_fail(err, ERR_UNKNOWN_FIELD, ptr,
                              "output %s: unknown parameter \"%.64s\" (an "
                              "output takes binary_data)",
                              name, key);
        if (!json_is_boolean(value))
            return codec_fail(err, ERR_WRONG_TYPE, ptr,
                              "output %s: binary_data must be true or false",
                              name);
        binary = json_is_true(value);
    }
    plan->outputs[plan->output_count++] = (attn_stage)s;
    plan->binary[s] = binary;
    return true;
}

static bool read_outputs(oip_reader *rd, json_t *outputs, oip_reply_plan *plan,
                         codec_error *err)
{
    if (!outputs)
        return true; /* the defaults of /v1, listed once validated */
    char ptr[CODEC_POINTER_MAX];
    oip_pointer2(ptr, "outputs", NULL);
    if (!json_is_array(outputs))
        return codec_fail(err, ERR_WRONG_TYPE, ptr,
                          "outputs must be an array of {\"name\": stage}");
    schema_value *want = &rd->fields.value[API_RETURN];
    for (size_t i = 0; i < json_array_size(outputs); i++)
        if (!read_output(json_array_get(outputs, i), i, plan, &want->stages,
                         rd->binary_output, err))
            return false;
    want->present = true;
    return true;
}

/* ---- the envelope ------------------------------------------------------- */

static const char *const request_members[] = {"id", "parameters", "inputs",
                                              "outputs", "model_name"};

static bool read_envelope(json_t *root, oip_reply_plan *plan, codec_error *err)
{
    char ptr[CODEC_POINTER_MAX] = "";
    if (!json_is_object(root))
        return codec_fail(err, ERR_INVALID_BODY, ptr,
                          "an inference request is a JSON object");
    const char *key;
    json_t *value;
    json_object_foreach(root, key, value)
    {
        size_t k = 0;
        while (k < 5 && strcmp(request_members[k], key) != 0)
            k++;
        if (k == 5) {
            oip_pointer2(ptr, key, NULL);
            return codec_fail(err, ERR_UNKNOWN_FIELD, ptr,
                              "unknown member \"%.64s\" of an inference "
                              "request (members are id, parameters, inputs, "
                              "outputs)",
                              key);
        }
    }
    json_t *model = json_object_get(root, "model_name");
    if (model && (!json_is_string(model) ||
                  strcmp(json_string_value(model), OIP_MODEL_NAME) != 0)) {
        oip_pointer2(ptr, "model_name", NULL);
        return codec_fail(err, ERR_INVALID_BODY, ptr,
                          "model_name must be \"" OIP_MODEL_NAME
                          "\", the model of this path");
    }
    json_t *id = json_object_get(root, "id");
    if (id && !json_is_string(id)) {
        oip_pointer2(ptr, "id", NULL);
        return codec_fail(err, ERR_WRONG_TYPE, ptr, "id must be a string");
    }
    if (id) {
        plan->id = strdup(json_string_value(id));
        if (!plan->id)
            return codec_fail(err, ERR_OUT_OF_MEMORY, NULL, "out of memory");
    }
    return true;
}

/* ---- errors of the rules between fields --------------------------------- */

/* validate_request() points at a /v1 member ("/x/1/2", "/num_heads"): the
 * pointer moves to the input or parameter that carried it, and the message
 * names it when it does not already begin with its name. */
static void repoint(const oip_reader *rd, codec_error *err)
{
    if (err->pointer[0] != '/')
        return;
    char token[CODEC_POINTER_MAX];
    size_t len = strcspn(err->pointer + 1, "/");
    memcpy(token, err->pointer + 1, len);
    token[len] = '\0';
    int f = schema_field_of(token);
    if (f < 0)
        return;
    char prefix[CODEC_POINTER_MAX + 16];
    if (f == API_RETURN) {
        oip_pointer2(err->pointer, "outputs", NULL);
        snprintf(prefix, sizeof prefix, "outputs");
    } else if (api_schema[f].kind == SCHEMA_TENSOR) {
        if (rd->input_of[f] >= 0)
            oip_input_pointer(err->pointer, (size_t)rd->input_of[f], NULL);
        else
            oip_pointer2(err->pointer, "inputs", NULL);
        snprintf(prefix, sizeof prefix, "input %s", token);
    } else {
        oip_pointer2(err->pointer, "parameters", token);
        snprintf(prefix, sizeof prefix, "parameter %s", token);
    }
    if (strncmp(err->detail, token, len) == 0 &&
        (err->detail[len] == ' ' || err->detail[len] == ':'))
        return;
    /* "prefix: detail", cut to fit */
    size_t head = strlen(prefix) + 2, len_detail = strlen(err->detail);
    if (head + len_detail >= sizeof err->detail)
        len_detail = sizeof err->detail - head - 1;
    memmove(err->detail + head, err->detail, len_detail);
    err->detail[head + len_detail] = '\0';
    memcpy(err->detail, prefix, head - 2);
    memcpy(err->detail + head - 2, ": ", 2);
}

/* Where a request's numbers must be whole (whole_literals.h); ctx is its
 * parsed root. */
static error_code whole_slot(void *ctx, const char *pointer)
{
    char token[2][CODEC_POINTER_MAX];
    size_t depth = codec_pointer_tokens(pointer, 2, token);
    if (depth >= 2 && strcmp(token[0], "parameters") == 0) {
        for (size_t i = 0;
             i < sizeof scheduling_parameters / sizeof *scheduling_parameters;
             i++)
            if (strcmp(token[1], scheduling_parameters[i]) == 0)
                return depth == 2 ? ERR_WRONG_TYPE /* as it refuses */
                                  : ERR_NONE;
        int f = schema_field_of(token[1]);
        return f >= 0 && api_schema[f].kind != SCHEMA_TENSOR
                   ? schema_whole_code(pointer + strlen("/parameters"))
                   : ERR_NONE; /* a tensor is refused as a parameter */
    }
    if (depth < 3 || strcmp(token[0], "inputs") != 0 ||
        token[1][strspn(token[1], "0123456789")] != '\0')
        return ERR_NONE;
    json_t *input = json_array_get(json_object_get(ctx, "inputs"),
                                   strtoul(token[1], NULL, 10));
    const char *below = strchr(pointer + strlen("/inputs/"), '/');
    return input ? oip_input_whole_code(input, below) : ERR_NONE;
}

/* ---- the request -------------------------------------------------------- */

/* Reads a parsed request (root; with the fast reader's flattened data, or
 * NULL) into req and plan. */
static bool decode_root(json_t *root, const oip_fast *fast, const char *body,
                        size_t len, size_t json_len,
                        const request_limits *limits, api_request *req,
                        oip_reply_plan *plan, codec_error *err)
{
    memset(req, 0, sizeof *req);
    memset(plan, 0, sizeof *plan);
    memset(err, 0, sizeof *err);
    /* jansson reads every number as a real: only the text tells */
    if ((!fast || fast->whole_unsure) &&
        !whole_literals_check(body, json_len, whole_slot, root, err))
        return false;
    oip_reader rd = {.limits = limits,
                     .fast = fast,
                     .budget = limits->max_elements,
                     .binary = (const unsigned char *)body + json_len,
                     .binary_len = len - json_len,
                     .fields = {.text = body,
                                .text_len = json_len,
                                .literal = number_literal}};
    for (int f = 0; f < API_FIELD_COUNT; f++)
        rd.input_of[f] = -1;
    bool ok = read_envelope(root, plan, err) &&
              (!json_object_get(root, "parameters") ||
               read_parameters(&rd, json_object_get(root, "parameters"), plan,
                               err)) &&
              oip_read_inputs(&rd, json_object_get(root, "inputs"), err) &&
              read_outputs(&rd, json_object_get(root, "outputs"), plan, err);
    if (ok && !(half_round_fields(&rd.fields, err) &&
                validate_request(&rd.fields, limits, req, err))) {
        repoint(&rd, err);
        ok = false;
    }
    if (ok && !json_object_get(root, "outputs"))
        for (int s = 0; s < ATTN_STAGE_COUNT; s++)
            if (req->want & ATTN_WANT(s)) {
                plan->outputs[plan->output_count++] = (attn_stage)s;
                plan->binary[s] = rd.binary_output;
            }
    api_fields_free(&rd.fields);
    if (!ok) {
        api_request_free(req);
        oip_reply_plan_free(plan);
    }
    return ok;
}

/* oip_decode_jansson() under the parse account the caller opened. */
static bool decode_jansson(const char *body, size_t len, size_t json_len,
                           const request_limits *limits, api_request *req,
                           oip_reply_plan *plan, codec_error *err)
{
    if (parse_json_nul_byte(body, json_len, err)) {
        memset(req, 0, sizeof *req);
        memset(plan, 0, sizeof *plan);
        return false;
    }
    json_error_t jerr;
    json_t *root;
    bool fits = parse_json_loadb(
        body, json_len, JSON_REJECT_DUPLICATES | JSON_DECODE_INT_AS_REAL, &root,
        &jerr, err);
    if (!root) {
        memset(req, 0, sizeof *req);
        memset(plan, 0, sizeof *plan);
        if (!fits)
            return false;
        if (json_len == 0)
            return codec_fail(err, ERR_INVALID_JSON, NULL,
                              "the request body is empty; send an inference "
                              "request");
        if (parse_json_number_overflow(
                body, json_len, &jerr,
                JSON_REJECT_DUPLICATES | JSON_DECODE_INT_AS_REAL, err))
            return false;
        return codec_fail(err, ERR_INVALID_JSON, NULL,
                          "%sinvalid JSON at line %d, column %d: %s",
                          json_len < len ? "the JSON header (the first "
                                           "Inference-Header-Content-Length "
                                           "bytes) is "
                                         : "",
                          jerr.line, jerr.column, jerr.text);
    }
    bool ok =
        decode_root(root, NULL, body, len, json_len, limits, req, plan, err);
    json_decref(root);
    return ok;
}

/* The body decoded within its parse account: by simdjson's reading first
 * when `fast` (any refusal is worded from jansson's reading, which then
 * decodes it again), else by jansson's alone. */
static bool decode_accounted(bool fast, const char *body, size_t len,
                             size_t json_len, const request_limits *limits,
                             api_request *req, oip_reply_plan *plan,
                             codec_error *err)
{
    parse_account account;
    parse_account_open(&account, parse_budget_account_limit(len));
    oip_fast parsed;
    bool ok = false;
    if (fast && oip_parse_fast(body, json_len, limits->max_elements, &parsed)) {
        ok = decode_root(parsed.root, &parsed, body, len, json_len, limits, req,
                         plan, err);
        oip_fast_free(&parsed);
    }
    if (!ok)
        ok = decode_jansson(body, len, json_len, limits, req, plan, err);
    parse_account_close(&account);
    return ok;
}

bool oip_decode_jansson(const char *body, size_t len, size_t json_len,
                        const request_limits *limits, api_request *req,
                        oip_reply_plan *plan, codec_error *err)
{
    return decode_accounted(false, body, len, json_len, limits, req, plan, err);
}

bool oip_decode(const char *body, size_t len, size_t json_len,
                const request_limits *limits, api_request *req,
                oip_reply_plan *plan, codec_error *err)
{
    return decode_accounted(true, body, len, json_len, limits, req, plan, err);
}

void oip_reply_plan_free(oip_reply_plan *plan)
{
    free(plan->id);
    memset(plan, 0, sizeof *plan);
}
