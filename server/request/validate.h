/*
 * validate.h - the rules between a request's fields: shapes that must agree,
 * limits on sizes, defaults that depend on other fields.  Each field on its
 * own was already checked against its schema row (decode.c); what is left
 * here is every rule that reads two fields or more.
 */
#ifndef SERVER_REQUEST_VALIDATE_H
#define SERVER_REQUEST_VALIDATE_H

#include "server/base/service_limits.h"
#include "server/request/codec_error.h"
#include "server/request/request.h"
#include "server/request/schema.h"

#include <stdbool.h>

/* Builds req from fields (taking their buffers) when every rule holds;
 * otherwise fills err and returns false, req left for api_request_free(). */
bool validate_request(api_fields *fields, const request_limits *limits,
                      api_request *req, codec_error *err);

#endif
