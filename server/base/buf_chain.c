#include "server/base/buf_chain.h"

#include <stdlib.h>

/* Adds an empty part at the end; false (and the chain failed) without
 * memory. */
static bool add_part(buf_chain *c)
{
    if (c->count == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 8;
        buf *parts = realloc(c->parts, cap * sizeof *parts);
        if (!parts) {
            c->failed = true;
            return false;
        }
        c->parts = parts;
        c->cap = cap;
    }
    c->parts[c->count++] = (buf){0};
    return true;
}

buf *buf_chain_tail(buf_chain *c)
{
    if (!c->failed && c->count == 0)
        add_part(c);
    if (c->failed) {
        c->spill.failed = true;
        return &c->spill;
    }
    return &c->parts[c->count - 1];
}

void buf_chain_adopt(buf_chain *c, buf *piece)
{
    if (buf_failed(piece))
        c->failed = true;
    if (c->failed) {
        buf_free(piece);
        return;
    }
    buf *tail = buf_chain_tail(c);
    if (c->failed) {
        buf_free(piece);
        return;
    }
    if (tail->len == 0) { /* the empty tail becomes the piece */
        buf_free(tail);
        *tail = *piece;
    } else if (add_part(c)) {
        c->parts[c->count - 1] = *piece;
    } else {
        buf_free(piece);
        return;
    }
    *piece = (buf){0};
    add_part(c); /* what follows is written apart */
}

bool buf_chain_failed(const buf_chain *c)
{
    if (c->failed)
        return true;
    for (size_t i = 0; i < c->count; i++)
        if (buf_failed(&c->parts[i]))
            return true;
    return false;
}

void buf_chain_free(buf_chain *c)
{
    for (size_t i = 0; i < c->count; i++)
        buf_free(&c->parts[i]);
    free(c->parts);
    buf_free(&c->spill);
    *c = (buf_chain){0};
}
