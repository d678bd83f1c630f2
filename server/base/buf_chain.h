/*
 * buf_chain.h - a reply body written as a run of buffers.
 *
 * A big tensor is formatted by several threads, each into a buffer of its
 * own; copying those pieces into one more buffer would cost a big reply's
 * size in memory again and milliseconds of one thread (docs/performance.md,
 * "The server's constants").  A chain keeps them as they are: the last part is
 * the one being written, a finished piece joins whole, and the HTTP layer sends
 * all the parts as one I/O vector.  As with buf, appends never fail loudly:
 * after a failed allocation the chain is marked failed and writes go nowhere.
 */
#ifndef SERVER_BUF_CHAIN_H
#define SERVER_BUF_CHAIN_H

#include "server/base/buf.h"

typedef struct {
    buf *parts;
    size_t count, cap;
    buf spill; /* what tail() returns once failed: appends are ignored */
    bool failed;
} buf_chain;

/* The part to write into next, never NULL. */
buf *buf_chain_tail(buf_chain *c);

/* Appends piece's bytes as a part of their own, taking its storage (piece
 * is left empty); later writes go to a new part. */
void buf_chain_adopt(buf_chain *c, buf *piece);

/* Whether any part failed to grow. */
bool buf_chain_failed(const buf_chain *c);

void buf_chain_free(buf_chain *c);

#endif
