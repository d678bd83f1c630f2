/*
 * budget.h - a global budget of memory held by requests in flight.
 *
 * Reservations are estimates made before allocating (from the body size, then
 * from the decoded shapes); a request that does not fit now is answered 503
 * with Retry-After instead of letting the process grow until the OOM killer
 * acts, and one that would not fit the whole budget 413.
 */
#ifndef SERVER_BUDGET_H
#define SERVER_BUDGET_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct {
    atomic_size_t used;
    size_t limit;
} budget;

void budget_init(budget *b, size_t limit);
/* Takes bytes from the budget; false (nothing taken) when they do not fit. */
bool budget_reserve(budget *b, size_t bytes);
/* Whether bytes fit the budget when nothing else holds any of it: when not,
 * no wait makes them fit, and the request is refused for good (413), not
 * told to retry (503). */
bool budget_ever_fits(const budget *b, size_t bytes);
void budget_release(budget *b, size_t bytes);
size_t budget_used(budget *b);

#endif
