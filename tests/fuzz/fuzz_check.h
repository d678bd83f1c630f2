/*
 * fuzz_check.h - how both fuzz targets state a property: CHECK(cond, fmt,
 * ...) prints the condition and the words, then aborts, which libFuzzer
 * reports as a crash and saves the input that caused it.
 */
#ifndef TESTS_FUZZ_CHECK_H
#define TESTS_FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "fuzz property violated: %s\n  ", #cond);          \
            fprintf(stderr, __VA_ARGS__);                                      \
            fprintf(stderr, "\n");                                             \
            abort();                                                           \
        }                                                                      \
    } while (0)

#endif
