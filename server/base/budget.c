#include "server/base/budget.h"

void budget_init(budget *b, size_t limit)
{
    atomic_init(&b->used, 0);
    b->limit = limit;
}

bool budget_reserve(budget *b, size_t bytes)
{
    size_t used = atomic_load(&b->used);
    do {
        if (used > b->limit || bytes > b->limit - used)
            return false;
    } while (!atomic_compare_exchange_weak(&b->used, &used, used + bytes));
    return true;
}

bool budget_ever_fits(const budget *b, size_t bytes)
{
    return bytes <= b->limit;
}

void budget_release(budget *b, size_t bytes)
{
    atomic_fetch_sub(&b->used, bytes);
}

size_t budget_used(budget *b) { return atomic_load(&b->used); }
