/*
 * static_coding.h - the embedded assets' gzip and deflate forms
 * (server/web/assets.h), compressed once at start-up and served from
 * memory.
 */
#ifndef SERVER_HTTP_STATIC_CODING_H
#define SERVER_HTTP_STATIC_CODING_H

#include "server/base/reply.h"
#include "server/http/reply_coding.h"

#include <stdbool.h>

/* Compresses every embedded asset in both codings, once per process (later
 * calls return at once); call it before the event threads start.  False
 * when out of memory: the assets are then compressed per request, as
 * reply_coding_apply does for any reply. */
bool static_coding_init(void);

/* When r's body is an embedded asset (set by reply_set_static) and accept
 * asks for it coded, points r's body at the asset's coded form, which
 * stays static, and sets r->content_encoding; reply_coding_apply then
 * leaves r alone.  Else r is left as it is. */
void static_coding_apply(reply *r, reply_accept accept);

#endif
