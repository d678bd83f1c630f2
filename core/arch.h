/*
 * arch.h - which instructions the core may use here: the one place that asks
 * the CPU.
 *
 * DESIGN
 * The core is plain C with two exceptions, both for x86-64 only: the
 * products of attend_kernels.h and extra builds of the softmax row loops of
 * softmax_rows.h, each built for AVX-512 and for AVX2 with FMA.
 * Every other architecture runs the plain C loops, vectorised by the
 * compiler for the build's own target (NEON on AArch64, where it is part of
 * the base instruction set), and OpenBLAS for the products; OpenBLAS picks
 * its own kernels for the CPU it finds.
 *
 * The SIMD level is the most the CPU runs, lowered by arch_simd_limit() when
 * an operator, a test or the benchmark asks for less (to run as a CPU
 * without AVX-512 would).  Both the kernels and the row loops follow it.
 */
#ifndef CORE_ARCH_H
#define CORE_ARCH_H

#include <stdbool.h>

/* x86-64 with a compiler that builds functions for other instruction sets
 * (GCC's and clang's target attribute): the only target with code of its
 * own. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define ARCH_X86_64 1
#else
#define ARCH_X86_64 0
#endif

/* What the x86 builds need of the CPU, as target attributes. */
#define ARCH_TARGET_AVX512 "avx512f,avx512dq,avx512bw,avx512vl,avx2,fma"
#define ARCH_TARGET_AVX2 "avx2,fma"

/* In increasing order; every level runs everything below it. */
typedef enum {
    ARCH_SIMD_GENERIC, /* the build's own target: plain C, OpenBLAS        */
    ARCH_SIMD_AVX2,    /* x86-64 with AVX2 and FMA: loops' and kernels'  */
    ARCH_SIMD_AVX512   /* x86-64 with AVX-512 F/DQ/BW/VL: theirs too     */
} arch_simd;

#define ARCH_SIMD_COUNT 3

/* "x86_64", "aarch64", ...: what the program was built for. */
const char *arch_name(void);

/* The most this CPU runs (asked once). */
arch_simd arch_simd_cpu(void);

/* The level in use: arch_simd_cpu(), or less after arch_simd_limit(). */
arch_simd arch_simd_level(void);

/* Caps the level in use at `most`.  For start-up, tests and benchmarks:
 * call it before forward passes start (attention.c asks whether the kernels
 * run once, at its first forward pass). */
void arch_simd_limit(arch_simd most);

/* "generic", "avx2", "avx512". */
const char *arch_simd_name(arch_simd level);

/* The level named so, with "auto" for the highest (no cap); false for any
 * other word. */
bool arch_simd_parse(const char *name, arch_simd *out);

#endif
