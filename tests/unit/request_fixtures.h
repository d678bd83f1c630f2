/*
 * request_fixtures.h - what the codec's unit tests decode under: the limits
 * of a small server, and the weights that complete a body (VALID_TAIL), so
 * that each body spells only the fields it is about.
 */
#ifndef TESTS_REQUEST_FIXTURES_H
#define TESTS_REQUEST_FIXTURES_H

#include "server/base/service_limits.h"

static const request_limits limits = {.max_tokens = 64,
                                      .max_width = 64,
                                      .max_heads = 8,
                                      .max_elements = 100000,
                                      .max_request_memory = 1 << 24};

#define LESSON_W "[[1,0,0,1],[0,1,1,0]]"
#define VALID_TAIL "\"w_q\":" LESSON_W ",\"w_k\":" LESSON_W ",\"w_v\":" LESSON_W

#endif
