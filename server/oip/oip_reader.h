/*
 * oip_reader.h - what the three files of the Open Inference Protocol's
 * reader share: the state of reading one request, the datatypes an input
 * may have, pointers into the JSON header.  oip_decode.c reads the JSON
 * header (envelope, parameters, outputs) and runs the rules; oip_inputs.c
 * reads each input tensor; oip_binary.c the binary parts after the header.
 */
#ifndef SERVER_OIP_OIP_READER_H
#define SERVER_OIP_OIP_READER_H

#include "server/request/codec_error.h"
#include "server/oip/oip_codec.h"
#include "server/oip/oip_fast.h"
#include "server/request/schema.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Whole numbers beyond this in magnitude are not all exact as a double
 * (2^53 + 1 is read as 2^53): an INT64 or UINT64 input (positions)
 * holding one is refused rather than rounded. */
#define OIP_MAX_EXACT_INT 9007199254740991.0 /* 2^53 - 1 */

/* What an element of a datatype is. */
typedef enum {
    OIP_FLOAT, /* a number of the request's dtype */
    OIP_INT,   /* a whole number (positions); the dtype is not its own */
    OIP_BOOL,  /* true or false, 1 byte 0 or 1 */
} oip_element;

/* The datatypes an input may have; every other one of the protocol (FP16,
 * BF16, BYTES) is refused by name. */
typedef struct {
    const char *name;
    size_t size; /* bytes of one element in binary data */
    oip_element element;
    int dtype;        /* OIP_FLOAT: the request's dtype it is (api_wire) */
    double low, high; /* OIP_INT: the whole numbers it holds, exact */
} oip_datatype;

/* What reading one request keeps between its steps. */
typedef struct {
    const request_limits *limits;
    api_fields fields;
    int input_of[API_FIELD_COUNT]; /* index in "inputs", or -1 */
    const oip_fast *fast; /* the fast reader's data, or NULL (jansson's) */
    const oip_datatype *numeric; /* the numeric inputs' datatype */
    int numeric_input;           /* the input that set it */
    size_t budget;               /* numbers still allowed */
    const unsigned char *binary; /* the bytes after the JSON header */
    size_t binary_len, binary_used;
    bool binary_output; /* binary_data_output */
} oip_reader;

/* ---- pointers and names (oip_pointer.c) --------------------------------- */

/* Appends "/token" to the pointer out; a token that does not fit (a member
 * name longer than a pointer holds) leaves out naming the parent. */
void oip_pointer_append(char out[CODEC_POINTER_MAX], const char *token);

/* out = "/a/b" for tokens a and b (b may be NULL). */
void oip_pointer2(char out[CODEC_POINTER_MAX], const char *a, const char *b);

/* out = "/inputs/i" followed by member when not NULL. */
void oip_input_pointer(char out[CODEC_POINTER_MAX], size_t i,
                       const char *member);

/* Joins the names of the fields `keep` accepts, in table order. */
void oip_field_names(char out[SCHEMA_LIST_MAX], bool (*keep)(api_field));

/* "[3, 2]" */
void oip_shape_words(const schema_tensor *t, char *out, size_t size);

/* ---- the inputs (oip_inputs.c) and their binary data (oip_binary.c) ------ */

/* Every input of "inputs" into rd->fields (each checked on its own: name,
 * datatype, shape, then data or binary bytes); the binary data must be
 * used up; the numeric inputs' datatype becomes the dtype. */
bool oip_read_inputs(oip_reader *rd, json_t *inputs, codec_error *err);

/* The code that refuses a number at `pointer` below one input (its
 * shape, binary_data_size, or the data of an integer datatype) that is not
 * whole; ERR_NONE where any number may stand (whole_literals.h). */
error_code oip_input_whole_code(json_t *input, const char *pointer);

/* Input i's binary_data_size (`size`) bytes of the binary part, the next
 * ones not yet used, into t (count elements of datatype dt). */
bool oip_read_binary_data(oip_reader *rd, api_field f, size_t i,
                          const oip_datatype *dt, double size, schema_tensor *t,
                          size_t count, codec_error *err);

#endif
