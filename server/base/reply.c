#include "server/base/reply.h"

#include "server/base/block_cache.h"

#include <stdlib.h>
#include <string.h>

void reply_parts_free(reply_part *parts, size_t count)
{
    for (size_t i = 0; i < count; i++)
        block_free(parts[i].data);
    free(parts);
}

void reply_clear(reply *r)
{
    if (!r->body_static)
        free(r->body);
    reply_parts_free(r->parts, r->part_count);
    if (r->held_in)
        budget_release(r->held_in, r->held);
    reply_error_shape shape = r->error_shape;
    const char *trace_id = r->trace_id;
    memset(r, 0, sizeof *r);
    r->error_shape = shape;
    r->trace_id = trace_id;
}

void reply_hold(reply *r, budget *b, size_t bytes)
{
    if (r->held_in)
        budget_release(r->held_in, r->held);
    r->held_in = bytes ? b : NULL;
    r->held = bytes;
}

void reply_set_static(reply *r, unsigned status, const char *content_type,
                      const char *body, size_t len)
{
    reply_clear(r);
    r->status = status;
    r->content_type = content_type;
    r->body = (char *)body;
    r->body_len = len;
    r->body_static = true;
}

void reply_set_owned(reply *r, unsigned status, const char *content_type,
                     char *body, size_t len)
{
    reply_clear(r);
    r->status = status;
    r->content_type = content_type;
    r->body = body;
    r->body_len = len;
}

void reply_set_parts(reply *r, unsigned status, const char *content_type,
                     reply_part *parts, size_t count)
{
    reply_clear(r);
    r->status = status;
    r->content_type = content_type;
    r->parts = parts;
    r->part_count = count;
    for (size_t i = 0; i < count; i++)
        r->body_len += parts[i].len;
}
