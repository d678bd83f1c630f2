/*
 * error_codes.h - every error this service can answer, one enum and one
 * table: each code has exactly one HTTP status, the problem document's title
 * (its status's reason phrase) and, for the 503s that a retry may cure, the
 * Retry-After it is sent with.
 *
 * A call site names the enum (ERR_SHAPE_MISMATCH), never a string; the status,
 * title and Retry-After follow from the row. The Open Inference Protocol's
 * error object (problem.h) carries the same code with the same status, so
 * the table needs no column for it. The contract test (tests/contract/)
 * prints this table and checks openapi.yaml's code list and docs/api.md's
 * table of codes against it.
 */
#ifndef SERVER_ERROR_CODES_H
#define SERVER_ERROR_CODES_H

/* Seconds a client is told to wait (Retry-After) when the server is busy or
 * shutting down: queues drain and budgets free up within about a second, and
 * a balancer retries on another replica sooner than that anyway. */
#define ERROR_RETRY_AFTER_SECONDS 1

#ifdef __cplusplus
extern "C" {
#endif

/* In the order openapi.yaml lists them (Problem.code). */
typedef enum {
    ERR_NONE, /* no error (a schema row without a code of its own) */
    /* 400: the body */
    ERR_INVALID_JSON,
    ERR_INVALID_BODY,
    ERR_UNKNOWN_FIELD,
    ERR_MISSING_FIELD,
    ERR_WRONG_TYPE,
    ERR_WRONG_RANK,
    ERR_RAGGED_ARRAY,
    ERR_EMPTY_ARRAY,
    ERR_SHAPE_MISMATCH,
    /* 400: a bad value of one field */
    ERR_INVALID_NUM_HEADS,
    ERR_INVALID_DTYPE,
    ERR_INVALID_RETURN,
    ERR_INVALID_SCALE,
    ERR_INVALID_ENCODING,
    ERR_INVALID_LAYOUT,
    ERR_INVALID_NUM_KV_HEADS,
    ERR_INVALID_POSITIONS,
    ERR_INVALID_WINDOW,
    ERR_INVALID_HEADS,
    ERR_INVALID_ROPE,
    ERR_INVALID_POSITIONAL_ENCODING,
    ERR_INVALID_MODULE,
    ERR_CONFLICTING_FIELDS,
    /* 400: the Open Inference Protocol's tensors, binary data, numbers */
    ERR_INVALID_DATATYPE,
    ERR_INVALID_BINARY_DATA,
    ERR_INVALID_BASE64,
    ERR_NUMBER_OUT_OF_RANGE,
    /* HTTP */
    ERR_BAD_REQUEST,
    ERR_UNAUTHORIZED,
    ERR_NOT_FOUND,
    ERR_METHOD_NOT_ALLOWED,
    ERR_BODY_TOO_LARGE,
    ERR_LIMIT_EXCEEDED,
    ERR_UNSUPPORTED_MEDIA_TYPE,
    ERR_NON_FINITE_RESULT,
    ERR_UNSUPPORTED_OPTION,
    ERR_HEADERS_TOO_LARGE,
    ERR_UNSUPPORTED_TRANSFER_CODING,
    /* 503, with Retry-After */
    ERR_OVERLOADED,
    ERR_OUT_OF_MEMORY,
    ERR_DRAINING,
    /* the deadline counts the queue's wait, and a request that could never
     * meet it is refused up front (--max-work, 413): a retry may meet it */
    ERR_COMPUTE_TIMEOUT,
    ERR_CODE_COUNT
} error_code;

typedef struct {
    const char *name;     /* the `code` sent: "shape_mismatch" */
    unsigned status;      /* its one HTTP status */
    const char *title;    /* the problem document's title */
    unsigned retry_after; /* Retry-After seconds, 0 = none */
} error_code_row;

/* Rows [ERR_NONE + 1, ERR_CODE_COUNT); row ERR_NONE is empty. */
extern const error_code_row error_codes[ERR_CODE_COUNT];

/* The row of code (static storage). */
const error_code_row *error_code_info(error_code code);

#ifdef __cplusplus
}
#endif

#endif
