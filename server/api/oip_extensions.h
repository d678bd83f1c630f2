/*
 * oip_extensions.h - what oip.c shares with Triton's extensions
 * (oip_extensions.c): the datatype the protocol lists an input under, and
 * the statistics every inference adds to.
 */
#ifndef SERVER_API_OIP_EXTENSIONS_H
#define SERVER_API_OIP_EXTENSIONS_H

#include "server/request/schema.h"

#include <stdbool.h>
#include <stddef.h>

/* The one datatype the metadata and the configuration list input `row`
 * under: INT64 for whole numbers, FP64 for numbers, BOOL for booleans
 * (docs/api.md says what else each takes). */
const char *oip_input_datatype(const schema_field *row);

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
