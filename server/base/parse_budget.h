/*
 * parse_budget.h - what parsing a body may hold, and the account that holds
 * the parsers to it.
 *
 * DESIGN
 * Once a body of n bytes has arrived, the HTTP layer reserves
 * parse_budget_need(n) in the memory budget; the decoders (decode.c,
 * oip_decode.c) open an account on the thread that parses, and everything
 * the parse holds that can grow with the body's structure is charged to it:
 *   - jansson's values, through allocation functions installed once at
 *     start (parse_budget_install(), json_set_alloc_funcs): each block is
 *     charged its usable size plus glibc's chunk header, and past the
 *     account the allocation fails, so jansson gives up as it does when
 *     memory runs out, and the decoder answers 413 limit_exceeded;
 *   - a simdjson DOM of a body too big for the thread's own reused parser
 *     (parse_budget_hold());
 *   - the token labels copied out of the tree (parse_budget_alloc()), which
 *     the request keeps until it is answered, as it keeps the reservation.
 * The numbers taken out of the body are not charged: at 8 bytes for at least
 * 2 bytes of body ("0,") they hold at most PARSE_BUDGET_NUMBERS_PER_BODY_BYTE
 * of the reservation, which the account leaves them.
 *
 * Why an account rather than a reservation at jansson's worst case: what
 * jansson's tree costs depends on the body's structure, not on its size
 * (`make parse-cost` measures it per pattern; docs/reliability.md holds the
 * table).  A reservation that covers every body would be priced at the
 * costliest pattern, empty objects, more than twice what any valid request
 * needs, and the budget would admit fewer than half as many big requests,
 * for the sake of bodies that are refused anyway.  The account charges what is
 * really allocated and stops any body, whatever its shape, at what it reserved.
 */
#ifndef SERVER_BASE_PARSE_BUDGET_H
#define SERVER_BASE_PARSE_BUDGET_H

#include "server/base/service_limits.h"

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Memory parsing may hold, per byte of body.  Valid requests are numbers:
 * the densest, one digit each in a flat array ("0,", /v2's data), cost
 * jansson's tree the most per byte (where its table's last doubling falls;
 * docs/reliability.md) and the numbers taken out 4 more; an eighth more is
 * margin.  The
 * fast parser needs less: its DOM (PARSE_BUDGET_DOM_PER_BODY_BYTE) and the
 * numbers.  A body whose tree does not fit is refused (413). */
#define PARSE_BUDGET_PER_BODY_BYTE 36
/* What parsing any body may hold at least: a small body's tree costs more
 * per byte than a big one's (a 47-byte request's, 1.8 KB), and a small
 * refused body's error must be worded as usual. */
#define PARSE_BUDGET_MIN ((size_t)16 << 10)
/* The numbers taken out of the body: 8 bytes for at least 2 of body. */
#define PARSE_BUDGET_NUMBERS_PER_BODY_BYTE 4
/* simdjson 3.0's DOM of a text of n bytes (dom::parser::allocate): a tape
 * of 8 bytes, structural indexes of 4 and a string buffer of 5/3 per byte,
 * plus the padded copy it parses. */
#define PARSE_BUDGET_DOM_PER_BODY_BYTE 15
/* JSON up to this size is parsed by the thread's own simdjson parser, kept
 * for the next request: the size of a request the event thread answers
 * itself, where allocating a parser would show.  What it keeps, 15 bytes a
 * byte (240 KiB), is in the process's base, not in the budget; bigger JSON
 * gets a parser of its own, charged to the account and freed with the
 * request, so that no thread keeps a big body's parser once it is
 * answered. */
#define PARSE_BUDGET_REUSE_MAX_BYTES LIMIT_FAST_LANE_MAX_BODY

/* Bytes the memory budget reserves for parsing a body of body_len bytes. */
size_t parse_budget_need(size_t body_len);
/* The largest body that fits `budget` bytes with what parsing it needs. */
size_t parse_budget_largest_body(size_t budget);

/* Makes jansson allocate through the accounting functions.  Call once at
 * start, before any thread uses jansson (json_set_alloc_funcs is
 * process-wide).  Without it accounts charge only parse_budget_hold(). */
void parse_budget_install(void);

/* One parse's account; lives on the parsing thread's stack. */
typedef struct {
    size_t limit; /* bytes it may hold */
    size_t used;  /* bytes held now */
    size_t peak;  /* the most held at once */
    bool refused; /* an allocation was refused since the last look */
} parse_account;

/* What the account of a body of body_len bytes may hold: its reservation
 * less the numbers' share. */
size_t parse_budget_account_limit(size_t body_len);

/* Opens an account of `limit` bytes on this thread (one at a time): from now
 * on this thread's jansson allocations and parse_budget_hold() charge it. */
void parse_account_open(parse_account *a, size_t limit);
/* Closes it; what it holds then is no longer counted. */
void parse_account_close(parse_account *a);
/* This thread's open account, or NULL (parse_json_loadb() asks it whether
 * jansson was refused memory). */
parse_account *parse_account_current(void);

/* Charges bytes held outside jansson to this thread's account; false
 * (nothing charged) when they do not fit.  True with no account open. */
bool parse_budget_hold(size_t bytes);
/* Gives back what parse_budget_hold() charged. */
void parse_budget_drop(size_t bytes);

/* malloc(size) charged to this thread's account, for what the parse hands
 * on to the request (the token labels): NULL, with the account marked
 * refused, past it.  Free it with free(); the charge stays until the
 * account closes, and the block, held by the request until it is answered,
 * stays within the parse's reservation, which the HTTP layer gives back
 * only then. */
void *parse_budget_alloc(size_t size);

#ifdef __cplusplus
}

/* Bytes charged to this thread's parse account while the guard lives (a
 * simdjson DOM), given back however the scope is left. */
struct parse_budget_guard {
    size_t bytes;
    bool held;
    explicit parse_budget_guard(size_t b) : bytes(b), held(parse_budget_hold(b))
    {
    }
    ~parse_budget_guard()
    {
        if (held)
            parse_budget_drop(bytes);
    }
    parse_budget_guard(const parse_budget_guard &) = delete;
    parse_budget_guard &operator=(const parse_budget_guard &) = delete;
};
#endif

#endif
