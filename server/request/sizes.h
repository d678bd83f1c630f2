/*
 * sizes.h - a field's size within the service's limits (sizes.c).
 */
#ifndef SERVER_REQUEST_SIZES_H
#define SERVER_REQUEST_SIZES_H

#include "server/base/service_limits.h"
#include "server/request/codec_error.h"
#include "server/request/schema.h"

#include <stdbool.h>
#include <stddef.h>

/* Field f's rows (tokens; 0 for none) and columns within --max-tokens and
 * --max-width (413 at f). */
bool validate_size(api_field f, size_t rows, size_t cols,
                   const request_limits *limits, codec_error *err);

#endif
