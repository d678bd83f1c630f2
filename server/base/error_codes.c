#include "server/base/error_codes.h"

/* A status, its reason phrase (RFC 9110 §15: the title of every problem of
 * that status) and its Retry-After. */
#define BAD_REQUEST 400, "Bad Request", 0
#define UNAUTHORIZED 401, "Unauthorized", 0
#define NOT_FOUND 404, "Not Found", 0
#define METHOD_NOT_ALLOWED 405, "Method Not Allowed", 0
#define CONTENT_TOO_LARGE 413, "Content Too Large", 0
#define UNSUPPORTED_MEDIA_TYPE 415, "Unsupported Media Type", 0
#define UNPROCESSABLE_CONTENT 422, "Unprocessable Content", 0
#define HEADERS_TOO_LARGE 431, "Request Header Fields Too Large", 0
#define NOT_IMPLEMENTED 501, "Not Implemented", 0
/* 503: the request was fine, the server cannot take it now */
#define RETRY_LATER 503, "Service Unavailable", ERROR_RETRY_AFTER_SECONDS

const error_code_row error_codes[ERR_CODE_COUNT] = {
    [ERR_INVALID_JSON] = {"invalid_json", BAD_REQUEST},
    [ERR_INVALID_BODY] = {"invalid_body", BAD_REQUEST},
    [ERR_UNKNOWN_FIELD] = {"unknown_field", BAD_REQUEST},
    [ERR_MISSING_FIELD] = {"missing_field", BAD_REQUEST},
    [ERR_WRONG_TYPE] = {"wrong_type", BAD_REQUEST},
    [ERR_WRONG_RANK] = {"wrong_rank", BAD_REQUEST},
    [ERR_RAGGED_ARRAY] = {"ragged_array", BAD_REQUEST},
    [ERR_EMPTY_ARRAY] = {"empty_array", BAD_REQUEST},
    [ERR_SHAPE_MISMATCH] = {"shape_mismatch", BAD_REQUEST},
    [ERR_INVALID_NUM_HEADS] = {"invalid_num_heads", BAD_REQUEST},
    [ERR_INVALID_DTYPE] = {"invalid_dtype", BAD_REQUEST},
    [ERR_INVALID_RETURN] = {"invalid_return", BAD_REQUEST},
    [ERR_INVALID_SCALE] = {"invalid_scale", BAD_REQUEST},
    [ERR_INVALID_ENCODING] = {"invalid_encoding", BAD_REQUEST},
    [ERR_INVALID_LAYOUT] = {"invalid_layout", BAD_REQUEST},
    [ERR_INVALID_NUM_KV_HEADS] = {"invalid_num_kv_heads", BAD_REQUEST},
    [ERR_INVALID_POSITIONS] = {"invalid_positions", BAD_REQUEST},
    [ERR_INVALID_WINDOW] = {"invalid_window", BAD_REQUEST},
    [ERR_INVALID_HEADS] = {"invalid_heads", BAD_REQUEST},
    [ERR_INVALID_ROPE] = {"invalid_rope", BAD_REQUEST},
    [ERR_INVALID_POSITIONAL_ENCODING] = {"invalid_positional_encoding",
                                         BAD_REQUEST},
    [ERR_INVALID_MODULE] = {"invalid_module", BAD_REQUEST},
    [ERR_CONFLICTING_FIELDS] = {"conflicting_fields", BAD_REQUEST},
    [ERR_INVALID_DATATYPE] = {"invalid_datatype", BAD_REQUEST},
    [ERR_INVALID_BINARY_DATA] = {"invalid_binary_data", BAD_REQUEST},
    [ERR_INVALID_BASE64] = {"invalid_base64", BAD_REQUEST},
    [ERR_NUMBER_OUT_OF_RANGE] = {"number_out_of_range", BAD_REQUEST},
    [ERR_BAD_REQUEST] = {"bad_request", BAD_REQUEST},
    [ERR_UNAUTHORIZED] = {"unauthorized", UNAUTHORIZED},
    [ERR_NOT_FOUND] = {"not_found", NOT_FOUND},
    [ERR_METHOD_NOT_ALLOWED] = {"method_not_allowed", METHOD_NOT_ALLOWED},
    [ERR_BODY_TOO_LARGE] = {"body_too_large", CONTENT_TOO_LARGE},
    [ERR_LIMIT_EXCEEDED] = {"limit_exceeded", CONTENT_TOO_LARGE},
    [ERR_UNSUPPORTED_MEDIA_TYPE] = {"unsupported_media_type",
                                    UNSUPPORTED_MEDIA_TYPE},
    [ERR_NON_FINITE_RESULT] = {"non_finite_result", UNPROCESSABLE_CONTENT},
    [ERR_UNSUPPORTED_OPTION] = {"unsupported_option", UNPROCESSABLE_CONTENT},
    [ERR_HEADERS_TOO_LARGE] = {"headers_too_large", HEADERS_TOO_LARGE},
    [ERR_UNSUPPORTED_TRANSFER_CODING] = {"unsupported_transfer_coding",
                                         NOT_IMPLEMENTED},
    [ERR_OVERLOADED] = {"overloaded", RETRY_LATER},
    [ERR_OUT_OF_MEMORY] = {"out_of_memory", RETRY_LATER},
    [ERR_DRAINING] = {"draining", RETRY_LATER},
    [ERR_COMPUTE_TIMEOUT] = {"compute_timeout", RETRY_LATER},
};

const error_code_row *error_code_info(error_code code)
{
    return &error_codes[code];
}
