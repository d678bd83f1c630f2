/*
 * build_info.h - what the server runs with: the architecture it was built
 * for, the SIMD level of the core's own loops, what computes the products
 * and OpenBLAS's kernels.  One description for --version, the metrics'
 * attention_build_info and the tests that check which path ran.
 */
#ifndef SERVER_BUILD_INFO_H
#define SERVER_BUILD_INFO_H

#include "core/arch.h"

#include <stdio.h>

typedef struct {
    const char *arch;      /* "x86_64", "aarch64", ...                   */
    const char *cpu;       /* the most this CPU runs: "avx512", ...       */
    const char *simd;      /* the level in use: "avx512", "avx2", "generic" */
    const char *products;  /* "avx512" (core/attend_kernels.h), "openblas" */
    const char *blas_core; /* OpenBLAS's kernels: "Haswell", ...          */
} build_info;

/* Caps the core's level at `most` (core/arch.h) and describes what follows.
 * Call it before the first forward pass: the products' path is fixed then. */
build_info build_info_apply(arch_simd most);

/* The lines of --version after the first. */
void build_info_print(FILE *out, const build_info *info);

#endif
