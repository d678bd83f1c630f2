#include "reply.h"

#include <stdlib.h>
#include <string.h>

void reply_clear(reply *r)
{
    if (!r->body_static)
        free(r->body);
    memset(r, 0, sizeof *r);
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
