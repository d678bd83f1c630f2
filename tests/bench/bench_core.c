/*
 * bench_core.c - times attn_forward() and a large square GEMM, driven line by
 * line from stdin so that tests/bench/run_bench.py can interleave it with the
 * PyTorch and NumPy contestants (each of them another long-lived process
 * answering the same commands).
 *
 * DESIGN
 * One command per line, one JSON line back:
 *   attn DTYPE N D H THREADS WEIGHTS CALLS
 *       self-attention on x (N, D) with W_q, W_k, W_v, W_o (D, D) split into H
 *       heads, as nn.MultiheadAttention(D, H, bias=False) computes it (it
 *       always applies its output projection, so W_o is always given).
 *       WEIGHTS 1 also returns the per-head weights (H, N, N).  CALLS calls
 *       back to back; the answer holds their total seconds and a checksum of
 *       the last output, so the driver can check every contestant computed
 *       the same numbers; "cpu_seconds" is the calling thread's CPU time over
 *       the calls (time spent waiting for a CPU left out; with THREADS > 1
 *       the workers' time is not in it).
 *   variant DTYPE N D H H_KV ROPE ALIBI WINDOW CAUSAL W_O THREADS CALLS
 *       the same problem (W_k, W_v (D, H_KV·D/H) with H_KV key/value heads)
 *       with modern attention switched on: RoPE over all of d_k (ROPE 1),
 *       ALiBi with the paper's slopes for 8 heads (ALIBI 1), a sliding
 *       WINDOW (0: none), CAUSAL; W_O 0 leaves out the output projection
 *       (the output is then the heads' concatenation); no stage but the
 *       output, so the fused pass runs.  The answer as for attn.
 *   batch DTYPE B N D H THREADS CALLS
 *       B sequences of the attn problem (x (B, N, D), shared weights) in one
 *       attn_forward(), then each of them alone, B calls: {"batch": seconds,
 *       "one_by_one": seconds, "batch_cpu_seconds": the calling thread's
 *       CPU time in the batch calls} over CALLS rounds.
 *   gemm DTYPE SIZE THREADS CALLS
 *       C (S, S) = A (S, S) @ B (S, S) through OpenBLAS with THREADS BLAS
 *       threads, the rate the machine reaches at all.
 *   cancel DTYPE N D H D_K D_OUT THREADS AFTER_MS ROUNDS
 *       self-attention on x (N, D) with W_q, W_k, W_v (D, H·D_K) and W_o
 *       (H·D_K, D_OUT), cancelled from another thread AFTER_MS into each of
 *       ROUNDS passes: {"after_cancel_ms": [...], "median_ms": m,
 *       "cpu_ms": [...], "median_cpu_ms": c} says how long each pass took
 *       to return after the cancel, and how much CPU time the process (every
 *       thread) spent in that time.  The attack
 *       on the service is `cancel float32 8192 1 128 16 1 T 300 R`.
 *   kernels M LDV TRIALS
 *       the scores and product kernels alone (core/attend_kernels.h), float32,
 *       as the fused pass calls them for one head: 120 query rows, d_k = d_v
 *       = 64, key blocks of 512, V's rows LDV floats apart (h·d_v in the
 *       wide layout, d_v in a head's own).  Each trial times one sweep over
 *       all M keys block by block (K and V streaming, as a task with one row
 *       block reads them) and as many over key block 0 alone (in L2, as a
 *       task's further row blocks read it), in turn:
 *       {"scores_stream":GFLOP/s, "scores_hot":…, "product_stream":…,
 *       "product_hot":…}, medians of TRIALS.
 *   project N D TRIALS
 *       one projection alone, float32, as pass 1 computes it: (N, D) @ (D,
 *       D) in blocks of 120 rows, one thread, by OpenBLAS's sgemm, by the
 *       product kernel reading W in place and by the product kernel from W
 *       packed into its strips (attend_pack_product, the packing not
 *       timed): {"openblas":GFLOP/s, "in_place":…, "packed":…}, the best
 *       of TRIALS, each trial the three in turn.
 *   info   the BLAS core, SIMD level and product path in use;   quit
 *
 * Every pass timed carries a stop (core/attn_stop.h) that never fires, with
 * a deadline, as the server's jobs do: reading it is part of the cost.
 *
 * `bench_core LEVEL` caps the core's SIMD level as the server's --kernels
 * does (core/arch.h: avx2 is what a CPU without AVX-512 runs).
 *
 * Threads.  The pool's caller joins every parallel loop, so pool_create(k)
 * gives k + 1 threads per loop.  THREADS = T runs the core with a pool of
 * T − 1 workers plus the calling thread (T = 1: no pool at all), which is what
 * the server does with --threads T (the request's job occupies one worker and
 * the T − 1 others help it).  BLAS runs single-threaded inside the core, as in
 * the server; only the `gemm` command raises OpenBLAS's own thread count.
 *
 * Inputs are made by bench_value() below, which run_bench.py reproduces in
 * NumPy bit for bit, so all contestants see the same numbers.
 */
#include "core/arch.h"
#include "core/attend_kernels.h"
#include "core/attention.h"
#include "core/attn_stop.h"
#include "server/setup/alloc_setup.h"
#include "server/setup/blas_setup.h"
#include "server/setup/build_info.h"

#include <cblas.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Most threads a command may ask for: the machines this runs on have 2
 * cores; 64 leaves room for larger ones and bounds the pools array. */
#define BENCH_MAX_THREADS 64
/* Longest command line; commands are a handful of short words. */
#define BENCH_LINE_MAX 256

/* Seeds of the five input tensors, shared with run_bench.py. */
enum { SEED_X = 1, SEED_WQ, SEED_WK, SEED_WV, SEED_WO, SEED_A, SEED_B };

static double clock_read(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double now_seconds(void) { return clock_read(CLOCK_MONOTONIC); }

/* CPU time of the calling thread: with THREADS = 1, beside the wall-clock
 * time, what the calls cost on a machine other work shares (time spent
 * waiting for a CPU is not in it).  Not the process's: OpenBLAS's idle
 * threads spin there too. */
static double cpu_seconds(void) { return clock_read(CLOCK_THREAD_CPUTIME_ID); }

/* Element i of the tensor with this seed: a Weyl sequence modulo 2^32 mapped
 * to [−amp, amp).  Exact in float and double, cheap to reproduce in NumPy:
 *   ((i * 2654435761 + seed * 40503) % 2**32) / 2**32 * 2 * amp − amp */
static double bench_value(size_t i, unsigned seed, double amp)
{
    unsigned long long u =
        ((unsigned long long)i * 2654435761ull + seed * 40503ull) &
        0xffffffffull;
    return (double)u / 4294967296.0 * 2 * amp - amp;
}

static void *make_tensor(tensor_dtype dtype, size_t count, unsigned seed,
                         double amp)
{
    void *a = malloc(count * tensor_dtype_size(dtype) + 1);
    if (!a)
        return NULL;
    for (size_t i = 0; i < count; i++) {
        double v = bench_value(i, seed, amp);
        if (dtype == TENSOR_FLOAT32)
            ((float *)a)[i] = (float)v;
        else
            ((double *)a)[i] = v;
    }
    return a;
}

static int parse_dtype(const char *s, tensor_dtype *out)
{
    if (strcmp(s, "float32") == 0)
        *out = TENSOR_FLOAT32;
    else if (strcmp(s, "float64") == 0)
        *out = TENSOR_FLOAT64;
    else
        return -1;
    return 0;
}

/* The stop every timed pass carries: a deadline a long way ahead. */
static attn_stop never_fires;

/* pools[t] serves THREADS = t + 1 (pools[0] is NULL: the caller alone). */
static pool *pools[BENCH_MAX_THREADS];

static pool *pool_for(size_t threads)
{
    if (threads <= 1)
        return NULL;
    if (!pools[threads - 1]) {
        pools[threads - 1] = pool_create(threads - 1, 1);
        /* as the server does (--spread-loops) */
        if (pools[threads - 1])
            pool_spread_loops(pools[threads - 1]);
    }
    return pools[threads - 1];
}

/* The inputs every command times: x (rows, d), W_q and W_o (d, d), W_k and
 * W_v (d, kv_width); weights of amplitude 1/√d keep the projections of
 * order 1. */
typedef struct {
    void *x, *w_q, *w_k, *w_v, *w_o;
} bench_inputs;

static void bench_inputs_free(bench_inputs *in)
{
    free(in->x);
    free(in->w_q);
    free(in->w_k);
    free(in->w_v);
    free(in->w_o);
}

/* False (nothing left allocated) when out of memory. */
static bool bench_inputs_make(bench_inputs *in, tensor_dtype dtype, size_t rows,
                              size_t d, size_t kv_width)
{
    double w_amp = 1.0 / sqrt((double)d);
    in->x = make_tensor(dtype, rows * d, SEED_X, 1.0);
    in->w_q = make_tensor(dtype, d * d, SEED_WQ, w_amp);
    in->w_k = make_tensor(dtype, d * kv_width, SEED_WK, w_amp);
    in->w_v = make_tensor(dtype, d * kv_width, SEED_WV, w_amp);
    in->w_o = make_tensor(dtype, d * d, SEED_WO, w_amp);
    if (in->x && in->w_q && in->w_k && in->w_v && in->w_o)
        return true;
    bench_inputs_free(in);
    return false;
}

/* Self-attention of in's x (n, d) over h heads of d / h, with W_o, as
 * nn.MultiheadAttention(D, H, bias=False) computes it; h_kv key/value heads
 * (0: h). */
static attn_problem bench_problem(const bench_inputs *in, tensor_dtype dtype,
                                  size_t n, size_t d, size_t h, size_t h_kv)
{
    return (attn_problem){
        .dtype = dtype,
        .n = n,
        .m = n,
        .d = d,
        .d_c = d,
        .heads = h,
        .kv_heads = h_kv,
        .d_k = d / h,
        .d_v = d / h,
        .d_out = d,
        .x = in->x,
        .w_q = in->w_q,
        .w_k = in->w_k,
        .w_v = in->w_v,
        .w_o = in->w_o,
        .stop = &never_fires,
    };
}

static void cmd_attn(const char *dtype_name, size_t n, size_t d, size_t h,
                     size_t threads, int weights, long calls)
{
    tensor_dtype dtype;
    if (parse_dtype(dtype_name, &dtype) != 0 || h == 0 || d % h != 0 ||
        threads == 0 || threads > BENCH_MAX_THREADS || calls < 1) {
        printf("{\"error\":\"bad attn command\"}\n");
        return;
    }
    bench_inputs in;
    pool *workers = pool_for(threads);
    if (!bench_inputs_make(&in, dtype, n, d, d)) {
        printf("{\"error\":\"out of memory\"}\n");
        return;
    }
    if (threads > 1 && !workers) {
        printf("{\"error\":\"out of memory\"}\n");
        goto done;
    }
    attn_problem p = bench_problem(&in, dtype, n, d, h, 0);
    unsigned want = weights ? ATTN_WANT(ATTN_WEIGHTS) : 0;
    /* each call frees the previous result inside the timed loop, as the
     * Python contestants do when they drop their last output */
    attn_result r = {0};
    double start = now_seconds(), cpu_start = cpu_seconds();
    attn_status st = ATTN_OK;
    for (long c = 0; c < calls && st == ATTN_OK; c++) {
        attn_result_free(&r);
        st = attn_forward(workers, &p, want, &r);
    }
    double seconds = now_seconds() - start;
    double cpu = cpu_seconds() - cpu_start;
    if (st != ATTN_OK) {
        printf("{\"error\":\"attn_forward status %d\"}\n", (int)st);
        goto done;
    }
    double sum = 0, abs_sum = 0, weight_sum = 0;
    for (size_t i = 0; i < n * d; i++) {
        double v = dtype == TENSOR_FLOAT32
                       ? ((float *)r.stage[ATTN_OUTPUT])[i]
                       : ((double *)r.stage[ATTN_OUTPUT])[i];
        sum += v;
        abs_sum += fabs(v);
    }
    for (size_t i = 0; weights && i < h * n * n; i++)
        weight_sum += dtype == TENSOR_FLOAT32
                          ? ((float *)r.stage[ATTN_WEIGHTS])[i]
                          : ((double *)r.stage[ATTN_WEIGHTS])[i];
    attn_result_free(&r);
    printf("{\"seconds\":%.9g,\"cpu_seconds\":%.9g,\"calls\":%ld,\"sum\":%.17g,"
           "\"abs_sum\":%.17g,\"weight_sum\":%.17g}\n",
           seconds, cpu, calls, sum, abs_sum, weight_sum);
done:
    bench_inputs_free(&in);
}

/* What `variant` switches on beside the plain problem. */
typedef struct {
    size_t kv_heads, window;
    int rope, alibi, causal, w_o;
} bench_variant;

static void cmd_variant(const char *dtype_name, size_t n, size_t d, size_t h,
                        bench_variant v, size_t threads, long calls)
{
    tensor_dtype dtype;
    size_t h_kv = v.kv_heads ? v.kv_heads : h;
    if (parse_dtype(dtype_name, &dtype) != 0 || h == 0 || d % h != 0 ||
        h % h_kv != 0 || threads == 0 || threads > BENCH_MAX_THREADS ||
        calls < 1 || h > 64) {
        printf("{\"error\":\"bad variant command\"}\n");
        return;
    }
    size_t d_k = d / h;
    bench_inputs in;
    if (!bench_inputs_make(&in, dtype, n, d, h_kv * d_k)) {
        printf("{\"error\":\"out of memory\"}\n");
        return;
    }
    pool *workers = pool_for(threads);
    double slopes[64];
    for (size_t k = 0; k < h; k++) /* the paper's slopes for 8 heads */
        slopes[k] = pow(2.0, -8.0 * (double)(k % 8 + 1) / 8.0);
    attn_result r = {0};
    attn_status st = ATTN_ERR_NOMEM;
    double seconds = 0;
    if (threads == 1 || workers) {
        attn_problem p = bench_problem(&in, dtype, n, d, h, v.kv_heads);
        p.causal = v.causal;
        p.window = v.window;
        if (!v.w_o)
            p.w_o = NULL, p.d_out = h * (d / h);
        p.alibi_slopes = v.alibi ? slopes : NULL;
        p.rope_dims = v.rope ? d_k / 2 * 2 : 0;
        p.rope_base = 10000;
        double start = now_seconds();
        st = ATTN_OK;
        for (long c = 0; c < calls && st == ATTN_OK; c++) {
            attn_result_free(&r);
            st = attn_forward(workers, &p, 0, &r);
        }
        seconds = now_seconds() - start;
    }
    if (st != ATTN_OK) {
        printf("{\"error\":\"attn_forward status %d\"}\n", (int)st);
    } else {
        double sum = 0;
        for (size_t i = 0; i < n * d; i++)
            sum += dtype == TENSOR_FLOAT32
                       ? ((float *)r.stage[ATTN_OUTPUT])[i]
                       : ((double *)r.stage[ATTN_OUTPUT])[i];
        printf("{\"seconds\":%.9g,\"calls\":%ld,\"sum\":%.17g}\n", seconds,
               calls, sum);
    }
    attn_result_free(&r);
    bench_inputs_free(&in);
}

static void cmd_batch(const char *dtype_name, size_t batch, size_t n, size_t d,
                      size_t h, size_t threads, long calls)
{
    tensor_dtype dtype;
    if (parse_dtype(dtype_name, &dtype) != 0 || h == 0 || d % h != 0 ||
        batch == 0 || threads == 0 || threads > BENCH_MAX_THREADS ||
        calls < 1) {
        printf("{\"error\":\"bad batch command\"}\n");
        return;
    }
    size_t elem = tensor_dtype_size(dtype);
    bench_inputs in; /* x holds the batch's rows */
    if (!bench_inputs_make(&in, dtype, batch * n, d, d)) {
        printf("{\"error\":\"out of memory\"}\n");
        return;
    }
    pool *workers = pool_for(threads);
    attn_status st = ATTN_ERR_NOMEM;
    double together = 0, alone = 0, together_cpu = 0;
    if (threads == 1 || workers) {
        attn_problem p = bench_problem(&in, dtype, n, d, h, 0);
        p.batch = batch;
        st = ATTN_OK;
        for (long c = 0; c < calls && st == ATTN_OK; c++) {
            attn_result r = {0};
            double start = now_seconds(), cpu_start = cpu_seconds();
            st = attn_forward(workers, &p, 0, &r);
            together += now_seconds() - start;
            together_cpu += cpu_seconds() - cpu_start;
            attn_result_free(&r);
            attn_problem one = p;
            one.batch = 0;
            start = now_seconds();
            for (size_t b = 0; b < batch && st == ATTN_OK; b++) {
                one.x = (const char *)in.x + b * n * d * elem;
                st = attn_forward(workers, &one, 0, &r);
                attn_result_free(&r);
            }
            alone += now_seconds() - start;
        }
    }
    if (st != ATTN_OK)
        printf("{\"error\":\"attn_forward status %d\"}\n", (int)st);
    else
        printf("{\"batch\":%.9g,\"one_by_one\":%.9g,"
               "\"batch_cpu_seconds\":%.9g,\"calls\":%ld}\n",
               together, alone, together_cpu, calls);
    bench_inputs_free(&in);
}

static void cmd_gemm(const char *dtype_name, size_t size, size_t threads,
                     long calls)
{
    tensor_dtype dtype;
    if (parse_dtype(dtype_name, &dtype) != 0 || threads == 0 ||
        threads > BENCH_MAX_THREADS || calls < 1) {
        printf("{\"error\":\"bad gemm command\"}\n");
        return;
    }
    void *a = make_tensor(dtype, size * size, SEED_A, 1.0);
    void *b = make_tensor(dtype, size * size, SEED_B, 1.0);
    void *c = malloc(size * size * tensor_dtype_size(dtype) + 1);
    if (!a || !b || !c) {
        printf("{\"error\":\"out of memory\"}\n");
        goto done;
    }
    openblas_set_num_threads((int)threads);
    int s = (int)size;
    double start = now_seconds();
    for (long i = 0; i < calls; i++) {
        if (dtype == TENSOR_FLOAT32)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s, s, s, 1,
                        a, s, b, s, 0, c, s);
        else
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s, s, s, 1,
                        a, s, b, s, 0, c, s);
    }
    double seconds = now_seconds() - start;
    blas_setup_single_threaded(); /* back to the core's setting */
    printf("{\"seconds\":%.9g,\"calls\":%ld}\n", seconds, calls);
done:
    free(a);
    free(b);
    free(c);
}

typedef struct {
    attn_stop *stop;
    double after;        /* seconds after the start */
    double cancelled_at; /* attn_stop_now() then   */
    double cpu_at;       /* the process's CPU seconds then */
} bench_canceller;

static void *cancel_after(void *arg)
{
    bench_canceller *c = arg;
    double until = attn_stop_now() + c->after;
    struct timespec pause = {0, 200000}; /* 0.2 ms steps */
    while (attn_stop_now() < until)
        nanosleep(&pause, NULL);
    c->cpu_at = clock_read(CLOCK_PROCESS_CPUTIME_ID);
    c->cancelled_at = attn_stop_now();
    attn_stop_cancel(c->stop, ATTN_STOP_CANCELLED);
    return NULL;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Prints the list [a...], then ,"name":median (a is sorted). */
static void print_with_median(double *a, long count, const char *name)
{
    for (long r = 0; r < count; r++)
        printf("%s%.3f", r ? "," : "[", a[r]);
    qsort(a, (size_t)count, sizeof *a, compare_doubles);
    printf("],\"%s\":%.3f", name,
           count % 2 ? a[count / 2] : (a[count / 2 - 1] + a[count / 2]) / 2);
}

/* Rounds a cancel command may ask for (bounds its array of times). */
#define BENCH_MAX_ROUNDS 64

static void cmd_cancel(const char *dtype_name, size_t n, size_t d, size_t h,
                       size_t d_k, size_t d_out, size_t threads,
                       double after_ms, long rounds)
{
    tensor_dtype dtype;
    if (parse_dtype(dtype_name, &dtype) != 0 || h == 0 || d_k == 0 ||
        threads == 0 || threads > BENCH_MAX_THREADS || rounds < 1 ||
        rounds > BENCH_MAX_ROUNDS || after_ms < 0) {
        printf("{\"error\":\"bad cancel command\"}\n");
        return;
    }
    size_t width = h * d_k;
    double w_amp = 1.0 / sqrt((double)d);
    bench_inputs in = {
        .x = make_tensor(dtype, n * d, SEED_X, 1.0),
        .w_q = make_tensor(dtype, d * width, SEED_WQ, w_amp),
        .w_k = make_tensor(dtype, d * width, SEED_WK, w_amp),
        .w_v = make_tensor(dtype, d * width, SEED_WV, w_amp),
        .w_o = d_out ? make_tensor(dtype, width * d_out, SEED_WO, w_amp) : NULL,
    };
    pool *workers = pool_for(threads);
    if (!in.x || !in.w_q || !in.w_k || !in.w_v || (d_out && !in.w_o) ||
        (threads > 1 && !workers)) {
        printf("{\"error\":\"out of memory\"}\n");
        bench_inputs_free(&in);
        return;
    }
    attn_problem p = {.dtype = dtype,
                      .n = n,
                      .m = n,
                      .d = d,
                      .d_c = d,
                      .heads = h,
                      .d_k = d_k,
                      .d_v = d_k,
                      .d_out = d_out ? d_out : width,
                      .x = in.x,
                      .w_q = in.w_q,
                      .w_k = in.w_k,
                      .w_v = in.w_v,
                      .w_o = in.w_o};
    double late[BENCH_MAX_ROUNDS], cpu[BENCH_MAX_ROUNDS];
    attn_status st = ATTN_ERR_CANCELLED;
    for (long r = 0; r < rounds && st == ATTN_ERR_CANCELLED; r++) {
        attn_stop stop;
        attn_stop_init(&stop, 0);
        p.stop = &stop;
        bench_canceller c = {.stop = &stop, .after = after_ms * 1e-3};
        pthread_t thread;
        if (pthread_create(&thread, NULL, cancel_after, &c) != 0) {
            st = ATTN_ERR_NOMEM;
            break;
        }
        attn_result out;
        st = attn_forward(workers, &p, 0, &out);
        double end = attn_stop_now();
        double end_cpu = clock_read(CLOCK_PROCESS_CPUTIME_ID);
        pthread_join(thread, NULL);
        late[r] = (end - c.cancelled_at) * 1e3;
        cpu[r] = (end_cpu - c.cpu_at) * 1e3;
        if (st == ATTN_OK)
            attn_result_free(&out);
    }
    if (st != ATTN_ERR_CANCELLED) {
        printf("{\"error\":\"attn_forward status %d\"}\n", (int)st);
    } else {
        printf("{\"after_cancel_ms\":");
        print_with_median(late, rounds, "median_ms");
        printf(",\"cpu_ms\":");
        print_with_median(cpu, rounds, "median_cpu_ms");
        printf("}\n");
    }
    bench_inputs_free(&in);
}

/* Trials a kernels command may ask for (bounds its arrays of rates). */
#define BENCH_MAX_TRIALS 99

/* GFLOP/s of the scores and product kernels over keys [0, m) block by
 * block, or over key block 0 m / 512 times (hot): rates[0] scores,
 * rates[1] product. */
static void kernel_sweep(size_t m, size_t ldv, bool hot, const float *q,
                         const float *kt, const float *v, float *s, float *acc,
                         double rates[2])
{
    enum { ROWS = 120, KEYS = 512, DK = 64, DV = 64 };
    float row_max[ROWS];
    double scores = 0, product = 0;
    for (size_t k0 = 0; k0 + KEYS <= m; k0 += KEYS) {
        size_t key = hot ? 0 : k0;
        double t0 = clock_read(CLOCK_THREAD_CPUTIME_ID);
        attend_scores_f32(ROWS, KEYS, DK, 0.125f, q, DK, kt + key * DK, s, KEYS,
                          row_max);
        double t1 = clock_read(CLOCK_THREAD_CPUTIME_ID);
        attend_product_f32(ROWS, DV, KEYS, s, KEYS, v + key * ldv, ldv, acc, DV,
                           true);
        scores += t1 - t0;
        product += clock_read(CLOCK_THREAD_CPUTIME_ID) - t1;
    }
    double flop = 2.0 * ROWS * DK * (double)(m / KEYS * KEYS);
    rates[0] = flop / scores * 1e-9;
    rates[1] = flop / product * 1e-9;
}

static void cmd_kernels(size_t m, size_t ldv, long trials)
{
    if (!attend_kernels_usable() || m < 512 || ldv < 64 || trials < 1 ||
        trials > BENCH_MAX_TRIALS) {
        printf("{\"error\":\"bad kernels command or no kernels\"}\n");
        return;
    }
    float *q = make_tensor(TENSOR_FLOAT32, 120 * 64, SEED_X, 1.0);
    float *kt = make_tensor(TENSOR_FLOAT32, m * 64, SEED_WK, 1.0);
    float *v = make_tensor(TENSOR_FLOAT32, m * ldv, SEED_WV, 1.0);
    float *s = make_tensor(TENSOR_FLOAT32, 120 * 512, SEED_WQ, 1.0);
    float *acc = make_tensor(TENSOR_FLOAT32, 120 * 64, SEED_WO, 1.0);
    if (!q || !kt || !v || !s || !acc) {
        printf("{\"error\":\"out of memory\"}\n");
    } else {
        double rate[4][BENCH_MAX_TRIALS];
        for (long t = 0; t < trials; t++) {
            double stream[2], hot[2];
            kernel_sweep(m, ldv, false, q, kt, v, s, acc, stream);
            kernel_sweep(m, ldv, true, q, kt, v, s, acc, hot);
            rate[0][t] = stream[0], rate[1][t] = hot[0];
            rate[2][t] = stream[1], rate[3][t] = hot[1];
        }
        static const char *names[4] = {"scores_stream", "scores_hot",
                                       "product_stream", "product_hot"};
        for (int i = 0; i < 4; i++) {
            qsort(rate[i], (size_t)trials, sizeof(double), compare_doubles);
            printf("%s\"%s\":%.1f", i ? "," : "{", names[i],
                   rate[i][trials / 2]);
        }
        printf("}\n");
    }
    free(q), free(kt), free(v), free(s), free(acc);
}

/* Seconds of one (n, d) @ (d, d) product in blocks of 120 rows: by sgemm
 * (way 0), the kernel reading w in place (1) or from packed (2). */
static double project_once(int way, size_t n, size_t d, const float *x,
                           const float *w, const float *packed, float *c)
{
    enum { ROWS = 120 };
    double t0 = clock_read(CLOCK_THREAD_CPUTIME_ID);
    for (size_t r0 = 0; r0 < n; r0 += ROWS) {
        size_t rows = n - r0 < ROWS ? n - r0 : ROWS;
        if (way == 0)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rows,
                        (int)d, (int)d, 1, x + r0 * d, (int)d, w, (int)d, 0,
                        c + r0 * d, (int)d);
        else if (way == 1)
            attend_product_f32(rows, d, d, x + r0 * d, d, w, d, c + r0 * d, d,
                               false);
        else
            attend_product_packed_f32(rows, d, d, x + r0 * d, d, packed,
                                      c + r0 * d, d, false);
    }
    return clock_read(CLOCK_THREAD_CPUTIME_ID) - t0;
}

static void cmd_project(size_t n, size_t d, long trials)
{
    if (!attend_kernels_usable() || !attend_product_fits_f32(d) || n < 1 ||
        trials < 1) {
        printf("{\"error\":\"bad project command or no kernels\"}\n");
        return;
    }
    float *x = make_tensor(TENSOR_FLOAT32, n * d, SEED_X, 1.0);
    float *w = make_tensor(TENSOR_FLOAT32, d * d, SEED_WQ, 1.0);
    float *packed = make_tensor(TENSOR_FLOAT32, d * d, SEED_WK, 1.0);
    float *c = make_tensor(TENSOR_FLOAT32, n * d, SEED_WO, 1.0);
    if (!x || !w || !packed || !c) {
        printf("{\"error\":\"out of memory\"}\n");
    } else {
        attend_pack_product_f32(w, d, d, d, packed);
        double best[3] = {0, 0, 0}, flop = 2.0 * (double)n * (double)(d * d);
        for (long t = 0; t < trials; t++)
            for (int way = 0; way < 3; way++) {
                double rate = flop / project_once(way, n, d, x, w, packed, c);
                best[way] = rate > best[way] ? rate : best[way];
            }
        printf("{\"openblas\":%.1f,\"in_place\":%.1f,\"packed\":%.1f}\n",
               best[0] * 1e-9, best[1] * 1e-9, best[2] * 1e-9);
    }
    free(x), free(w), free(packed), free(c);
}

int main(int argc, char **argv)
{
    arch_simd most = ARCH_SIMD_COUNT - 1; /* no cap */
    if (argc > 2 || (argc == 2 && !arch_simd_parse(argv[1], &most))) {
        fprintf(stderr, "usage: %s [auto|avx2|generic]\n", argv[0]);
        return 2;
    }
    blas_setup_kernels(argv); /* the server's kernel choice, same rules */
    build_info info = build_info_apply(most);
    blas_setup_single_threaded();
    alloc_setup_reuse_large_buffers(); /* the server's allocator policy */
    /* a deadline as far ahead as a day: read on every block, never met */
    attn_stop_init(&never_fires, attn_stop_now() + 86400);
    char line[BENCH_LINE_MAX];
    while (fgets(line, sizeof line, stdin)) {
        char cmd[16], dtype[16];
        size_t n, d, h, threads;
        int weights;
        long calls;
        bench_variant v;
        size_t sequences, d_k, d_out;
        double after_ms;
        if (sscanf(line, "attn %15s %zu %zu %zu %zu %d %ld", dtype, &n, &d, &h,
                   &threads, &weights, &calls) == 7)
            cmd_attn(dtype, n, d, h, threads, weights, calls);
        else if (sscanf(line,
                        "variant %15s %zu %zu %zu %zu %d %d %zu %d %d %zu %ld",
                        dtype, &n, &d, &h, &v.kv_heads, &v.rope, &v.alibi,
                        &v.window, &v.causal, &v.w_o, &threads, &calls) == 12)
            cmd_variant(dtype, n, d, h, v, threads, calls);
        else if (sscanf(line, "batch %15s %zu %zu %zu %zu %zu %ld", dtype,
                        &sequences, &n, &d, &h, &threads, &calls) == 7)
            cmd_batch(dtype, sequences, n, d, h, threads, calls);
        else if (sscanf(line, "cancel %15s %zu %zu %zu %zu %zu %zu %lf %ld",
                        dtype, &n, &d, &h, &d_k, &d_out, &threads, &after_ms,
                        &calls) == 9)
            cmd_cancel(dtype, n, d, h, d_k, d_out, threads, after_ms, calls);
        else if (sscanf(line, "gemm %15s %zu %zu %ld", dtype, &n, &threads,
                        &calls) == 4)
            cmd_gemm(dtype, n, threads, calls);
        else if (sscanf(line, "kernels %zu %zu %ld", &n, &d, &calls) == 3)
            cmd_kernels(n, d, calls);
        else if (sscanf(line, "project %zu %zu %ld", &n, &d, &calls) == 3)
            cmd_project(n, d, calls);
        else if (sscanf(line, "%15s", cmd) == 1 && strcmp(cmd, "info") == 0)
            printf("{\"blas_core\":\"%s\",\"simd\":\"%s\",\"products\":"
                   "\"%s\"}\n",
                   info.blas_core, info.simd, info.products);
        else if (sscanf(line, "%15s", cmd) == 1 && strcmp(cmd, "quit") == 0)
            break;
        else
            printf("{\"error\":\"unknown command\"}\n");
        fflush(stdout);
    }
    for (size_t i = 0; i < BENCH_MAX_THREADS; i++)
        pool_destroy(pools[i]);
    return 0;
}
