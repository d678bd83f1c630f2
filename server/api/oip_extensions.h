/*
 * oip_extensions.h - what oip.c shares with Triton's extensions
 * (oip_extensions.c): the datatype the protocol lists an input under, and
 * the statistics every inference adds to.
 */
#ifndef SERVER_API_OIP_EXTENSIONS_H
#define SERVER_API_OIP_EXTENSIONS_H

#include "server/base/buf.h"
#include "server/base/reply.h"
#include "server/request/schema.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

/* The one datatype the metadata and the configuration list input `row`
 * under: INT64 for whole numbers, FP64 for numbers, BOOL for booleans
 * (docs/api.md says what else each takes). */
const char *oip_input_datatype(const schema_field *row);

/* Writes one tensor of a model document: its name, the datatype it is
 * listed under and its rank; input: an input (else an output). */
typedef void oip_tensor_writer(buf *b, const char *name, const char *datatype,
                               int rank, bool input);

/* A model document's two lists, each tensor written by `tensor`: the
 * inputs (the schema's tensor rows at their lowest rank, one sequence),
 * then `between`, then the outputs (the stages of a one-sequence problem,
 * FP64). */
void oip_model_tensors(buf *b, oip_tensor_writer *tensor, const char *between);

/* The reply of a document made once (pthread_once) into doc: 200 and it,
 * or 503 out of memory saying the server could not allocate `what`. */
void oip_model_document(reply *out, pthread_once_t *once, void (*make)(void),
                        const buf *doc, const char *what);

/* One /v2 inference as Triton's statistics count it, in seconds. */
typedef struct {
    bool ok;           /* answered 200                               */
    size_t inferences; /* the sequences it computed (B, or 1)         */
    double total;      /* from the body's arrival to the answer       */
    double queue;      /* from its decoding to its computation        */
    double input;      /* decoding the body                           */
    double infer;      /* the attention                               */
    double output;     /* writing the reply                           */
} oip_stats_sample;

/* Adds s to the model's statistics (any thread). */
void oip_stats_record(const oip_stats_sample *s);

#endif
