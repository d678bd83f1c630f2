/*
 * fma_peak.c - one core's fused multiply-add peak in float32 and float64,
 * the ceiling `make bench` holds the core's arithmetic rate against.
 *
 * DESIGN
 * A fused multiply-add has a latency of several cycles and a CPU issues one
 * or two a cycle, so one dependent chain measures the latency, not the
 * throughput.  The loop below keeps CHAINS independent accumulators, each
 * acc = acc · MUL + ADD, in vector registers; the rate is the best over
 * several chain counts (8 to 24: more than latency × issue width on every
 * x86-64 core known to us, and at most 24 + 2 of the 32 AVX-512 registers),
 * so it needs no knowledge of the CPU's latencies.  Every instruction set
 * this CPU has among AVX-512F and AVX2 + FMA is measured, and the peak is
 * the best of them (on CPUs that split 512-bit work in two halves both give
 * the same).  The functions of each set are compiled for it alone (target
 * attributes) and called only when the CPU says it has it; a CPU with
 * neither is refused with a message, not a crash.
 *
 *   fma_peak [SECONDS]
 * prints one JSON line: {"float32": GFLOP/s, "float64": GFLOP/s, "isa32":
 * set, "isa64": set, "chains32": n, "chains64": n, "rates": {set/dtype/chains:
 * GFLOP/s, ...}}; SECONDS (default 0.1) is the least time of one
 * measurement.  Or {"error": "..."} and exit status 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__)
#include <immintrin.h>
#define FMA_PEAK_X86 1
#else
#define FMA_PEAK_X86 0
#endif

/* acc · MUL + ADD converges to ADD / (1 − MUL) = 1: the accumulators stay
 * normal numbers however long the loop runs (no overflow, no subnormals,
 * whose slow paths would measure something else). */
#define FMA_MUL 0.9990234375 /* 1 − 2^−10, exact in float and double */
#define FMA_ADD 0.0009765625 /* 2^−10 */
/* Loop trips between clock reads: long enough for the reads to cost
 * nothing, short enough to calibrate in steps. */
#define FMA_INNER_TRIPS 1024
/* Default time spent on each case (instruction set, dtype, chains). */
#define FMA_DEFAULT_SECONDS 0.1
/* The time is spent in samples this long, and the fastest counts: another
 * process or an interrupt only ever slows a sample down, and on a shared
 * machine (the scheduler's slices are a few ms) a sample this short often
 * runs whole on a CPU of its own. */
#define FMA_SAMPLE_SECONDS 0.004

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A kernel runs `trips` × FMA_INNER_TRIPS steps of its chains and returns
 * the sum of its accumulators (printed nowhere, but used, so the compiler
 * keeps the work). */
typedef double (*fma_kernel)(long trips);

#if FMA_PEAK_X86
/* One kernel: CHAINS accumulators of type VT, all updated each step. */
#define FMA_KERNEL(name, isa_attr, VT, set1, fmadd, sum, chains)               \
    __attribute__((target(isa_attr), noinline)) static double name(long trips) \
    {                                                                          \
        VT acc[chains];                                                        \
        VT mul = set1(FMA_MUL), add = set1(FMA_ADD);                           \
        _Pragma("GCC unroll 24") for (int c = 0; c < chains; c++) acc[c] =     \
            set1(1.0 + c * FMA_ADD);                                           \
        for (long t = 0; t < trips * FMA_INNER_TRIPS; t++) {                   \
            _Pragma("GCC unroll 24") for (int c = 0; c < chains; c++) acc[c] = \
                fmadd(acc[c], mul, add);                                       \
        }                                                                      \
        double total = 0;                                                      \
        _Pragma("GCC unroll 24") for (int c = 0; c < chains; c++) total +=     \
            sum(acc[c]);                                                       \
        return total;                                                          \
    }

#define SUM512_PS(v) (double)_mm512_reduce_add_ps(v)
#define SUM512_PD(v) _mm512_reduce_add_pd(v)
#define SUM256_PS(v) (double)_mm256_cvtss_f32(v)
#define SUM256_PD(v) _mm256_cvtsd_f64(v)
#define SET1_PS512(x) _mm512_set1_ps((float)(x))
#define SET1_PS256(x) _mm256_set1_ps((float)(x))

/* The chain counts tried, as X(chains) */
#define FMA_CHAIN_CASES(X) X(8) X(12) X(16) X(24)

#define AVX512_KERNELS(chains)                                                 \
    FMA_KERNEL(avx512_ps_##chains, "avx512f", __m512, SET1_PS512,              \
               _mm512_fmadd_ps, SUM512_PS, chains)                             \
    FMA_KERNEL(avx512_pd_##chains, "avx512f", __m512d, _mm512_set1_pd,         \
               _mm512_fmadd_pd, SUM512_PD, chains)
/* AVX2 has 16 registers: 24 chains would spill, which the table skips */
#define AVX2_KERNELS(chains)                                                   \
    FMA_KERNEL(avx2_ps_##chains, "avx2,fma", __m256, SET1_PS256,               \
               _mm256_fmadd_ps, SUM256_PS, chains)                             \
    FMA_KERNEL(avx2_pd_##chains, "avx2,fma", __m256d, _mm256_set1_pd,          \
               _mm256_fmadd_pd, SUM256_PD, chains)
FMA_CHAIN_CASES(AVX512_KERNELS)
AVX2_KERNELS(8)
AVX2_KERNELS(12)
#endif

typedef struct {
    const char *isa; /* as __builtin_cpu_supports() names it, or "avx2" */
    int float64;
    int chains;
    int lanes; /* numbers per vector */
    fma_kernel run;
} fma_case;

#if FMA_PEAK_X86
#define AVX512_ROWS(chains)                                                    \
    {"avx512f", 0, chains, 16, avx512_ps_##chains},                            \
        {"avx512f", 1, chains, 8, avx512_pd_##chains},
#define AVX2_ROWS(chains)                                                      \
    {"avx2", 0, chains, 8, avx2_ps_##chains},                                  \
        {"avx2", 1, chains, 4, avx2_pd_##chains},
static const fma_case cases[] = {FMA_CHAIN_CASES(AVX512_ROWS) AVX2_ROWS(8)
                                     AVX2_ROWS(12)};
#define FMA_CASE_COUNT (sizeof cases / sizeof cases[0])

static int cpu_has(const char *isa)
{
    __builtin_cpu_init();
    if (strcmp(isa, "avx512f") == 0)
        return __builtin_cpu_supports("avx512f");
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
#endif

/* GFLOP/s of one case: the fastest of the samples of FMA_SAMPLE_SECONDS
 * that fit in `seconds`. */
static double measure(const fma_case *c, double seconds, double *sink)
{
    long trips = 1;
    double took;
    for (;;) { /* calibrate: double the trips until a sample is long enough */
        double start = now_seconds();
        *sink += c->run(trips);
        took = now_seconds() - start;
        if (took >= FMA_SAMPLE_SECONDS)
            break;
        trips *= 2;
    }
    double flops =
        2.0 * (double)c->lanes * c->chains * (double)trips * FMA_INNER_TRIPS;
    double best = flops / took / 1e9, spent = took, end = now_seconds();
    while (spent < seconds) {
        double start = now_seconds();
        *sink += c->run(trips);
        end = now_seconds();
        spent += end - start;
        if (flops / (end - start) / 1e9 > best)
            best = flops / (end - start) / 1e9;
    }
    return best;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : FMA_DEFAULT_SECONDS;
    if (argc > 2 || !(seconds > 0)) {
        fprintf(stderr, "usage: %s [SECONDS]\n", argv[0]);
        return 2;
    }
#if FMA_PEAK_X86
    double best[2] = {0, 0}, sink = 0;
    const fma_case *winner[2] = {NULL, NULL};
    char rates[2048];
    size_t used = 0;
    for (size_t i = 0; i < FMA_CASE_COUNT; i++) {
        const fma_case *c = &cases[i];
        if (!cpu_has(c->isa))
            continue;
        double rate = measure(c, seconds, &sink);
        used += (size_t)snprintf(rates + used, sizeof rates - used,
                                 "%s\"%s/%s/%d\":%.1f", used ? "," : "", c->isa,
                                 c->float64 ? "float64" : "float32", c->chains,
                                 rate);
        if (rate > best[c->float64]) {
            best[c->float64] = rate;
            winner[c->float64] = c;
        }
    }
    if (!winner[0] || !winner[1]) {
        printf("{\"error\":\"this CPU has neither AVX-512F nor AVX2 with "
               "FMA: no peak measured\"}\n");
        return 1;
    }
    printf("{\"float32\":%.1f,\"float64\":%.1f,\"isa32\":\"%s\","
           "\"isa64\":\"%s\",\"chains32\":%d,\"chains64\":%d,\"rates\":{%s},"
           "\"sink\":%.3g}\n",
           best[0], best[1], winner[0]->isa, winner[1]->isa, winner[0]->chains,
           winner[1]->chains, rates, sink);
    return 0;
#else
    (void)measure;
    printf("{\"error\":\"fma_peak measures x86-64's AVX-512F or AVX2 with "
           "FMA only\"}\n");
    return 1;
#endif
}
