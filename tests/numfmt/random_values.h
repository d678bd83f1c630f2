/*
 * random_values.h - the repeatable value streams of the numfmt test and
 * benchmark (one generator, so both see the same kinds of numbers).
 */
#ifndef TESTS_NUMFMT_RANDOM_VALUES_H
#define TESTS_NUMFMT_RANDOM_VALUES_H

#include <cmath>
#include <cstdint>

struct rng {
    uint64_t state;
    uint64_t next() /* splitmix64 */
    {
        uint64_t z = (state += 0x9e3779b97f4a7c15u);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
        return z ^ (z >> 31);
    }
    double uniform() /* in (0, 1) */
    {
        return (double(next() >> 11) + 0.5) * 0x1p-53;
    }
    double gaussian() /* Box-Muller */
    {
        return std::sqrt(-2.0 * std::log(uniform())) *
               std::cos(6.283185307179586 * uniform());
    }
};

#endif
