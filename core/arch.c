/*
 * arch.c - the CPU's SIMD level, asked once, and the cap on it (arch.h).
 */
#include "core/arch.h"

#include <stdatomic.h>
#include <string.h>

static const char *const simd_names[ARCH_SIMD_COUNT] = {"generic", "avx2",
                                                        "avx512"};

const char *arch_name(void)
{
#if defined(__x86_64__)
    return "x86_64";
#elif defined(__aarch64__)
    return "aarch64";
#else
    return "unknown";
#endif
}

static arch_simd ask_cpu(void)
{
#if ARCH_X86_64
    __builtin_cpu_init();
    bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    if (avx2 && __builtin_cpu_supports("avx512f") &&
        __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl"))
        return ARCH_SIMD_AVX512;
    return avx2 ? ARCH_SIMD_AVX2 : ARCH_SIMD_GENERIC;
#else
    return ARCH_SIMD_GENERIC;
#endif
}

/* -1 until asked; every thread that asks first gets the same answer */
static atomic_int cpu_level = -1;
static atomic_int level_cap = ARCH_SIMD_COUNT - 1;

arch_simd arch_simd_cpu(void)
{
    int known = atomic_load_explicit(&cpu_level, memory_order_relaxed);
    if (known < 0) {
        known = (int)ask_cpu();
        atomic_store_explicit(&cpu_level, known, memory_order_relaxed);
    }
    return (arch_simd)known;
}

arch_simd arch_simd_level(void)
{
    int cap = atomic_load_explicit(&level_cap, memory_order_relaxed);
    arch_simd cpu = arch_simd_cpu();
    return (int)cpu < cap ? cpu : (arch_simd)cap;
}

void arch_simd_limit(arch_simd most)
{
    atomic_store_explicit(&level_cap, (int)most, memory_order_relaxed);
}

const char *arch_simd_name(arch_simd level)
{
    return (unsigned)level < ARCH_SIMD_COUNT ? simd_names[level] : "unknown";
}

bool arch_simd_parse(const char *name, arch_simd *out)
{
    if (strcmp(name, "auto") == 0) {
        *out = (arch_simd)(ARCH_SIMD_COUNT - 1);
        return true;
    }
    for (int level = 0; level < ARCH_SIMD_COUNT; level++)
        if (strcmp(name, simd_names[level]) == 0) {
            *out = (arch_simd)level;
            return true;
        }
    return false;
}
