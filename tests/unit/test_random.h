/*
 * test_random.h - the unit tests' random numbers: xorshift64 (Marsaglia
 * 2003), reproducible from its seed, so a failure names the inputs that
 * caused it.  Each test file that includes it has its own state.
 */
#ifndef TESTS_UNIT_TEST_RANDOM_H
#define TESTS_UNIT_TEST_RANDOM_H

#include <stdint.h>

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static double uniform(void) /* [-1, 1) */
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / (double)(1ull << 52) - 1.0;
}

#endif
