/*
 * test_attention_stop.c - a forward pass stops when its job's stop fires
 * (core/attn_stop.h): before it starts, from another thread while it runs,
 * or at its deadline; it then returns why within a block of work, leaves
 * nothing allocated, and a stop that never fires changes no bit.
 *
 * DESIGN
 * malloc and free are wrapped at link time (-Wl,--wrap, tests/unit/suite.mk)
 * to count the blocks the core holds while a pass runs: a stopped pass must
 * end with as many frees as mallocs.  attn_stop_check() is wrapped too, to
 * count the pass's readings of its stop and fire it at the k-th: so a test
 * can stop a pass at every block of work in turn, whatever the machine's
 * speed.  Time bounds are generous for a loaded
 * machine, and scale with the time of one block of work measured here (so
 * that they hold under an emulator too).  What a stop bounds is the work
 * done after it, so that is asserted tightly as the process's CPU time
 * from the cancel to the return (every thread's, the freeing included);
 * the wall-clock time also holds the scheduler's delays of a loaded
 * machine (a helper thread waiting for a CPU), so its bound is loose.
 * A stop cannot cut short a malloc() or a free(): a cancel that lands while
 * the pass allocates its buffers is seen after them, and the buffers are
 * freed after it.  A release build's allocator maps and unmaps the pages
 * in microseconds, but a sanitizer's writes its shadow of every byte, on
 * malloc and again on free (about a second per GiB under ASan): so the
 * bound adds what this build's allocator takes for the pass's bytes,
 * measured here too.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tests/unit/attention_problems.h"

#include "core/attn_stop.h"

#include <cblas.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

/* ---- counting the core's blocks ---- */

void *__real_malloc(size_t size);
void __real_free(void *block);

static atomic_bool counting;
static atomic_long mallocs, live_blocks;

void *__wrap_malloc(size_t size)
{
    void *block = __real_malloc(size);
    if (block && atomic_load(&counting)) {
        atomic_fetch_add(&mallocs, 1);
        atomic_fetch_add(&live_blocks, 1);
    }
    return block;
}

void __wrap_free(void *block)
{
    if (block && atomic_load(&counting))
        atomic_fetch_sub(&live_blocks, 1);
    __real_free(block);
}

static void start_counting(void)
{
    atomic_store(&mallocs, 0);
    atomic_store(&live_blocks, 0);
    atomic_store(&counting, true);
}

static void stop_counting(void) { atomic_store(&counting, false); }

/* ---- counting the readings of the stop ---- */

attn_stop_reason __real_attn_stop_check(struct attn_stop *s);

static atomic_long readings, fire_at; /* fire_at 0: never */

attn_stop_reason __wrap_attn_stop_check(struct attn_stop *s)
{
    long k = atomic_fetch_add(&readings, 1) + 1;
    long at = atomic_load(&fire_at);
    if (s && at && k >= at)
        attn_stop_cancel(s, ATTN_STOP_CANCELLED);
    return __real_attn_stop_check(s);
}

/* The pass of p, its stop fired at its k-th reading (0: never); how many
 * readings it made goes to *made. */
static attn_status run_fired_at(pool *workers, attn_problem *p, unsigned want,
                                bool reference, long k, long *made,
                                attn_result *out)
{
    attn_stop stop;
    attn_stop_init(&stop, 0);
    p->stop = &stop;
    atomic_store(&readings, 0);
    atomic_store(&fire_at, k);
    start_counting();
    attn_status status = reference ? attn_forward_reference(p, want, out)
                                   : attn_forward(workers, p, want, out);
    stop_counting();
    atomic_store(&fire_at, 0);
    *made = atomic_load(&readings);
    p->stop = NULL;
    return status;
}

/* ---- problems ---- */

/* Self-attention on x (B, n, d) (B = batch, 0: one sequence) with W_q, W_k,
 * W_v (d, h·d_k) and W_o (h·d_k, d_out) (d_out 0: none), random numbers. */
typedef struct {
    attn_problem p;
    void *buffers[6];
} projected_problem;

static void make_projected(projected_problem *pp, tensor_dtype dtype,
                           size_t batch, size_t n, size_t d, size_t h,
                           size_t d_k, size_t d_out)
{
    memset(pp, 0, sizeof *pp);
    attn_problem *p = &pp->p;
    p->dtype = dtype, p->batch = batch;
    p->n = p->m = n, p->d = p->d_c = d;
    p->heads = h, p->d_k = p->d_v = d_k, p->d_out = d_out;
    size_t width = h * d_k;
    p->x = pp->buffers[0] = random_tensor(dtype, (batch ? batch : 1) * n * d);
    p->w_q = pp->buffers[1] = random_tensor(dtype, d * width);
    p->w_k = pp->buffers[2] = random_tensor(dtype, d * width);
    p->w_v = pp->buffers[3] = random_tensor(dtype, d * width);
    if (d_out)
        p->w_o = pp->buffers[4] = random_tensor(dtype, width * d_out);
}

static void free_projected(projected_problem *pp)
{
    for (int i = 0; i < 6; i++)
        free(pp->buffers[i]);
}

/* A pass that is almost all output projection: x (2048, 16) attends to a
 * context of 16 rows through 8 heads of 256, and W_o is (2048, 2048), so
 * the concatenation @ W_o is 97 % of the multiply-adds. */
static void make_output_heavy(projected_problem *pp, tensor_dtype dtype)
{
    make_projected(pp, dtype, 0, 2048, 16, 8, 256, 1024);
    pp->p.m = 16;
    pp->p.context = pp->buffers[5] = random_tensor(dtype, 16 * 16);
}

/* The attack on the service: x (8192, 1); W_q, W_k, W_v (1, 2048) as 128
 * heads of 16; W_o (2048, 1): a small request, many narrow heads, hours of
 * a core's exp() at this size. */
static void make_attack(projected_problem *pp, tensor_dtype dtype)
{
    make_projected(pp, dtype, 0, 8192, 1, 128, 16, 1);
}

static bool no_stage(const attn_result *r)
{
    for (int s = 0; s < ATTN_STAGE_COUNT; s++)
        if (r->stage[s])
            return false;
    return true;
}

/* ---- a pass stopped from another thread ---- */

/* CPU seconds of every thread of the process so far. */
static double process_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct {
    attn_stop *stop;
    double delay;        /* seconds after the start to cancel */
    double cancelled_at; /* attn_stop_now() when it did       */
    double cpu_at;       /* process_cpu() then                */
} canceller;

static void *cancel_later(void *arg)
{
    canceller *c = arg;
    struct timespec pause = {
        (time_t)c->delay, (long)((c->delay - (double)(time_t)c->delay) * 1e9)};
    nanosleep(&pause, NULL);
    c->cpu_at = process_cpu();
    c->cancelled_at = attn_stop_now();
    attn_stop_cancel(c->stop, ATTN_STOP_CANCELLED);
    return NULL;
}

typedef struct {
    attn_status status;
    double late;      /* seconds from the cancel or deadline to the return */
    double late_cpu;  /* CPU seconds of the process in that time (cancel) */
    double alloc_cpu; /* what allocating and freeing the pass's bytes takes */
    long live_blocks; /* the core's blocks still held after the return   */
    bool no_stage;
} stopped_pass;

/* CPU seconds this build's allocator takes to hand out `bytes` in one
 * block and take it back, untouched (the pages a pass touches are freed
 * within late_cpu_bound()'s 100 ms); measured once per size. */
static double alloc_seconds(size_t bytes)
{
    static size_t sizes[8];
    static double seconds[8];
    static int known;
    for (int i = 0; i < known; i++)
        if (sizes[i] == bytes)
            return seconds[i];
    double start = process_cpu();
    free(malloc(bytes));
    double taken = process_cpu() - start;
    if (known < 8)
        sizes[known] = bytes, seconds[known++] = taken;
    return taken;
}

/* Runs p on `workers` (NULL: the calling thread alone), stopped `delay`
 * seconds after the start: by a cancel from another thread, or by its
 * deadline. */
static stopped_pass run_stopped(pool *workers, attn_problem *p, unsigned want,
                                double delay, bool by_deadline)
{
    double alloc_cpu =
        alloc_seconds(attn_bytes_needed(p, want, pool_size(workers) + 1));
    attn_stop stop;
    double start = attn_stop_now();
    attn_stop_init(&stop, by_deadline ? start + delay : 0);
    p->stop = &stop;
    canceller c = {.stop = &stop, .delay = delay};
    pthread_t thread;
    if (!by_deadline)
        assert_int_equal(pthread_create(&thread, NULL, cancel_later, &c), 0);
    attn_result out;
    start_counting();
    attn_status status = attn_forward(workers, p, want, &out);
    double end = attn_stop_now(), end_cpu = process_cpu();
    stop_counting();
    if (!by_deadline)
        pthread_join(thread, NULL);
    p->stop = NULL;
    stopped_pass r = {.status = status,
                      .late =
                          end - (by_deadline ? start + delay : c.cancelled_at),
                      .late_cpu = by_deadline ? 0 : end_cpu - c.cpu_at,
                      .alloc_cpu = alloc_cpu,
                      .live_blocks = atomic_load(&live_blocks),
                      .no_stage = no_stage(&out)};
    if (status == ATTN_OK)
        attn_result_free(&out);
    return r;
}

/* Seconds one task of the attack's fused pass takes here (120 queries of
 * one head against its 8192 keys), the median of three. */
static double one_block_seconds(void)
{
    attn_problem p = {.dtype = TENSOR_FLOAT32,
                      .n = 120,
                      .m = 8192,
                      .heads = 1,
                      .d_k = 16,
                      .d_v = 16};
    p.q = random_tensor(p.dtype, p.n * p.d_k);
    p.k = random_tensor(p.dtype, p.m * p.d_k);
    p.v = random_tensor(p.dtype, p.m * p.d_v);
    double times[3];
    for (int i = 0; i < 3; i++) {
        attn_result out;
        double start = attn_stop_now();
        assert_int_equal(attn_forward(NULL, &p, 0, &out), ATTN_OK);
        times[i] = attn_stop_now() - start;
        attn_result_free(&out);
    }
    free((void *)p.q), free((void *)p.k), free((void *)p.v);
    double lo = fmin(times[0], fmin(times[1], times[2]));
    double hi = fmax(times[0], fmax(times[1], times[2]));
    return times[0] + times[1] + times[2] - lo - hi;
}

/* The CPU time a pass may spend after its stop fired: 100 ms (a block is
 * a few ms of one thread, freeing the pass's buffers a few more), or 40
 * blocks where a block takes longer. */
static double late_cpu_bound(void)
{
    static double bound;
    if (bound == 0)
        bound = fmax(0.1, 40 * one_block_seconds());
    return bound;
}

/* The allocator's share of a bound: what allocating and freeing the pass's
 * bytes took when measured, twice over for a loaded machine's noise. */
#define ALLOC_MARGIN 2
/* The wall-clock time's bound: five times the CPU's, for the scheduler's
 * delays. */
#define WALL_FACTOR 5

static void assert_stopped(stopped_pass r, attn_status why, const char *what)
{
    if (r.status != why)
        fail_msg("%s: status %d, not %d", what, r.status, why);
    double cpu_bound = late_cpu_bound() + ALLOC_MARGIN * r.alloc_cpu;
    if (r.late_cpu > cpu_bound)
        fail_msg("%s: %.1f ms of CPU after the cancel (bound %.0f ms, %.0f "
                 "of it the allocator's)",
                 what, r.late_cpu * 1e3, cpu_bound * 1e3,
                 ALLOC_MARGIN * r.alloc_cpu * 1e3);
    if (r.late > WALL_FACTOR * cpu_bound)
        fail_msg("%s: returned %.1f ms after the stop (bound %.0f ms)", what,
                 r.late * 1e3, WALL_FACTOR * cpu_bound * 1e3);
    if (r.live_blocks != 0)
        fail_msg("%s: %ld blocks left allocated", what, r.live_blocks);
    if (!r.no_stage)
        fail_msg("%s: a stage was handed back", what);
}

/* ---- the tests ---- */

/* The stop fired before the call, for each way in. */
static void assert_stops_before_anything(attn_stop_reason why,
                                         attn_status expected)
{
    pool *workers = pool_create(1, 4);
    projected_problem one, batch;
    make_projected(&one, TENSOR_FLOAT32, 0, 300, 64, 4, 16, 64);
    make_projected(&batch, TENSOR_FLOAT64, 3, 300, 64, 4, 16, 0);
    attn_stop stop;
    attn_stop_init(&stop, why == ATTN_STOP_DEADLINE ? attn_stop_now() : 0);
    if (why == ATTN_STOP_CANCELLED)
        attn_stop_cancel(&stop, ATTN_STOP_CANCELLED);
    one.p.stop = batch.p.stop = &stop;
    attn_problem *problems[] = {&one.p, &batch.p};
    for (int i = 0; i < 2; i++)
        for (int way = 0; way < 3; way++) {
            attn_result out;
            memset(&out, 0xff, sizeof out);
            start_counting();
            attn_status status =
                way == 2 ? attn_forward_reference(problems[i], want_all, &out)
                         : attn_forward(way ? workers : NULL, problems[i],
                                        want_all, &out);
            stop_counting();
            assert_int_equal(status, expected);
            assert_int_equal(atomic_load(&mallocs), 0);
            assert_true(no_stage(&out));
        }
    free_projected(&one);
    free_projected(&batch);
    pool_destroy(workers);
}

static void
a_cancel_before_the_call_returns_at_once_with_nothing_allocated(void **state)
{
    (void)state;
    assert_stops_before_anything(ATTN_STOP_CANCELLED, ATTN_ERR_CANCELLED);
}

static void
a_deadline_already_passed_returns_at_once_with_nothing_allocated(void **state)
{
    (void)state;
    assert_stops_before_anything(ATTN_STOP_DEADLINE, ATTN_ERR_DEADLINE);
}

/* The attack request, cancelled 100 ms in, alone and over a pool, in both
 * types. */
static void
a_cancel_from_another_thread_ends_the_attack_request_at_once(void **state)
{
    (void)state;
    pool *workers = pool_create(1, 4);
    for (int t = 0; t < 2; t++) {
        projected_problem attack;
        make_attack(&attack, t ? TENSOR_FLOAT64 : TENSOR_FLOAT32);
        assert_stopped(run_stopped(NULL, &attack.p, 0, 0.1, false),
                       ATTN_ERR_CANCELLED, "attack, one thread");
        assert_stopped(run_stopped(workers, &attack.p, 0, 0.1, false),
                       ATTN_ERR_CANCELLED, "attack, over the pool");
        free_projected(&attack);
    }
    pool_destroy(workers);
}

/* (4096, 512, 8) with W_o, about a second over a pool: cancelled in its
 * projections (5 ms), its attention (150 ms) and its output projection
 * (close to its end is not predictable: a deadline test covers it), by the
 * kernels and through OpenBLAS, fused and with whole rows of scores. */
static void
a_cancel_from_another_thread_ends_every_pass_over_the_pool(void **state)
{
    (void)state;
    pool *workers = pool_create(1, 4);
    projected_problem wide;
    make_projected(&wide, TENSOR_FLOAT64, 0, 4096, 512, 8, 64, 512);
    unsigned wants[] = {0, ATTN_WANT(ATTN_WEIGHTS)};
    for (int own = 0; own < 2; own++) {
        attn_use_own_kernels(own);
        for (int w = 0; w < 2; w++) {
            assert_stopped(
                run_stopped(workers, &wide.p, wants[w], 0.005, false),
                ATTN_ERR_CANCELLED, "(4096, 512, 8) at 5 ms");
            assert_stopped(run_stopped(workers, &wide.p, wants[w], 0.15, false),
                           ATTN_ERR_CANCELLED, "(4096, 512, 8) at 150 ms");
        }
    }
    attn_use_own_kernels(true);
    free_projected(&wide);
    pool_destroy(workers);
}

/* A cancel from another thread a quarter of the way into a pass that is
 * nearly all fused attention ends the attention within a key block on
 * every thread: x (4096, 1) through 64 heads of 16, about a second of one
 * core, cancelled at a quarter of the time the same pass took uncancelled
 * just before (so in its attention on a fast machine and a slow one: a
 * fixed delay lands in the projections where they are slow, as under a
 * sanitizer), alone and over a pool. */
static void a_cancel_in_the_attention_ends_it_within_a_block(void **state)
{
    (void)state;
    pool *workers = pool_create(1, 4);
    projected_problem narrow;
    make_projected(&narrow, TENSOR_FLOAT32, 0, 4096, 1, 64, 16, 1);
    for (int on_pool = 0; on_pool < 2; on_pool++) {
        pool *on = on_pool ? workers : NULL;
        attn_result out;
        double start = attn_stop_now();
        assert_int_equal(attn_forward(on, &narrow.p, 0, &out), ATTN_OK);
        double whole = attn_stop_now() - start;
        attn_result_free(&out);
        assert_stopped(
            run_stopped(on, &narrow.p, 0, whole / 4, false), ATTN_ERR_CANCELLED,
            on_pool ? "attention, over the pool" : "attention, one thread");
    }
    free_projected(&narrow);
    pool_destroy(workers);
}

/* A deadline that passes while the pass runs, at points spread over it
 * (also between and within a batch's sequences). */
static void a_deadline_in_the_middle_ends_the_pass_with_deadline(void **state)
{
    (void)state;
    pool *workers = pool_create(1, 4);
    projected_problem attack, wide, batch;
    make_attack(&attack, TENSOR_FLOAT32);
    make_projected(&wide, TENSOR_FLOAT64, 0, 4096, 512, 8, 64, 512);
    make_projected(&batch, TENSOR_FLOAT64, 16, 1024, 512, 8, 64, 512);
    double delays[] = {0.001, 0.02, 0.08, 0.25};
    for (int i = 0; i < 4; i++) {
        assert_stopped(run_stopped(workers, &attack.p, 0, delays[i], true),
                       ATTN_ERR_DEADLINE, "attack");
        assert_stopped(run_stopped(NULL, &wide.p, 0, delays[i], true),
                       ATTN_ERR_DEADLINE, "(4096, 512, 8), one thread");
        assert_stopped(run_stopped(workers, &batch.p, 0, delays[i], true),
                       ATTN_ERR_DEADLINE, "a batch of 16 (1024, 512, 8)");
    }
    free_projected(&attack);
    free_projected(&wide);
    free_projected(&batch);
    pool_destroy(workers);
}

/* Whichever block of work the stop fires before, the pass returns
 * ATTN_ERR_CANCELLED with nothing held and nothing handed back: at every
 * reading of an unstopped pass (40 spread over it where it makes more),
 * fast (fused and whole rows, by the kernels and through OpenBLAS, alone
 * and over a pool) and reference, one sequence and a batch, with RoPE and
 * the sinusoidal encoding (pass 0). */
static void a_stop_at_any_block_ends_the_pass_cleanly(void **state)
{
    (void)state;
    pool *workers = pool_create(1, 4);
    projected_problem one, batch;
    make_projected(&one, TENSOR_FLOAT32, 0, 130, 64, 4, 16, 48);
    make_projected(&batch, TENSOR_FLOAT64, 3, 130, 32, 2, 16, 0);
    one.p.rope_dims = 16, one.p.rope_base = 10000, one.p.causal = true;
    batch.p.sinusoidal = true;
    attn_problem *problems[] = {&one.p, &batch.p};
    for (int i = 0; i < 2; i++)
        for (int way = 0; way < 6; way++) {
            bool reference = way == 5, own = way % 2 == 0;
            unsigned want = way / 2 == 1 ? want_all : 0;
            attn_use_own_kernels(own);
            pool *on = way >= 2 && !reference ? workers : NULL;
            attn_result out;
            long total;
            assert_int_equal(
                run_fired_at(on, problems[i], want, reference, 0, &total, &out),
                ATTN_OK);
            attn_result_free(&out);
            /* about 40 readings spread over the pass, the first and the
             * last among them */
            long step = total / 40 > 1 ? total / 40 : 1;
            for (long k = 1; k <= total;
                 k = k < total && k + step > total ? total : k + step) {
                long made;
                attn_status status = run_fired_at(on, problems[i], want,
                                                  reference, k, &made, &out);
                if (status != ATTN_ERR_CANCELLED || !no_stage(&out) ||
                    atomic_load(&live_blocks) != 0)
                    fail_msg("problem %d way %d, fired at reading %ld of %ld: "
                             "status %d, %ld blocks held",
                             i, way, k, total, status,
                             atomic_load(&live_blocks));
            }
        }
    attn_use_own_kernels(true);
    free_projected(&one);
    free_projected(&batch);
    pool_destroy(workers);
}

/* A stop that fires at the first block of the output projection saves that
 * projection's work: what the pass spends after the work before W_o is less
 * than half of what the whole W_o product costs.  The work before W_o (x @
 * W_q, the attention) is timed and counted on the same problem without W_o
 * (the same loops until then): small in a release build, a large share of
 * the pass under a sanitizer.  Alone, by the kernels and through OpenBLAS. */
static void a_stop_in_the_output_projection_saves_its_work(void **state)
{
    (void)state;
    projected_problem output;
    make_output_heavy(&output, TENSOR_FLOAT32);
    for (int own = 0; own < 2; own++) {
        attn_use_own_kernels(own);
        attn_result out;
        long before, total, made;
        const void *w_o = output.p.w_o;
        output.p.w_o = NULL;
        assert_int_equal(
            run_fired_at(NULL, &output.p, 0, false, 0, &before, &out), ATTN_OK);
        attn_result_free(&out);
        output.p.w_o = w_o;
        double start = process_cpu();
        assert_int_equal(
            run_fired_at(NULL, &output.p, 0, false, 0, &total, &out), ATTN_OK);
        double whole = process_cpu() - start;
        attn_result_free(&out);
        assert_true(total > before);
        output.p.w_o = NULL; /* the work before W_o, timed once warm */
        start = process_cpu();
        assert_int_equal(
            run_fired_at(NULL, &output.p, 0, false, 0, &before, &out), ATTN_OK);
        double until_w_o = process_cpu() - start;
        attn_result_free(&out);
        output.p.w_o = w_o;
        start = process_cpu();
        assert_int_equal(
            run_fired_at(NULL, &output.p, 0, false, before + 1, &made, &out),
            ATTN_ERR_CANCELLED);
        double stopped = process_cpu() - start;
        assert_int_equal(atomic_load(&live_blocks), 0);
        if (stopped - until_w_o > (whole - until_w_o) / 2)
            fail_msg("own %d: %.0f ms of CPU stopped, %.0f ms whole, %.0f ms "
                     "before W_o",
                     own, stopped * 1e3, whole * 1e3, until_w_o * 1e3);
    }
    attn_use_own_kernels(true);
    free_projected(&output);
}

/* A stop that never fires (a deadline far ahead) leaves every stage the
 * same bits as no stop, on random problems of every kind, alone and over a
 * pool, by the kernels and through OpenBLAS. */
static void a_stop_that_never_fires_changes_no_bit(void **state)
{
    (void)state;
    pool *workers = pool_create(2, 4);
    attn_stop far;
    attn_stop_init(&far, attn_stop_now() + 1e6);
    for (int own = 0; own < 2; own++) {
        attn_use_own_kernels(own);
        for (unsigned seed = 0; seed < 60; seed++) {
            random_problem rp;
            make_random_problem(&rp, seed % 2 ? TENSOR_FLOAT32 : TENSOR_FLOAT64,
                                seed);
            unsigned want = seed % 3 ? want_all : 0; /* 0: fused */
            pool *on = seed % 4 < 2 ? workers : NULL;
            attn_result plain, watched;
            attn_status a = attn_forward(on, &rp.p, want, &plain);
            rp.p.stop = &far;
            attn_status b = attn_forward(on, &rp.p, want, &watched);
            assert_int_equal(a, b);
            for (int s = 0; a == ATTN_OK && s < ATTN_STAGE_COUNT; s++) {
                assert_true(!plain.stage[s] == !watched.stage[s]);
                if (plain.stage[s] && memcmp(plain.stage[s], watched.stage[s],
                                             stage_count(&rp.p, (attn_stage)s) *
                                                 tensor_dtype_size(rp.p.dtype)))
                    fail_msg("seed %u own %d: stage %s differs", seed, own,
                             attn_stage_name((attn_stage)s));
            }
            if (a == ATTN_OK) {
                attn_result_free(&plain);
                attn_result_free(&watched);
            }
            free_random_problem(&rp);
        }
    }
    attn_use_own_kernels(true);
    pool_destroy(workers);
}

int main(void)
{
    /* OpenBLAS runs on one thread, as in the server (blas_setup.c): its own
     * threads spin after a product, CPU time the stop cannot save and that
     * a loaded machine makes longer, which the CPU bounds would count. */
    openblas_set_num_threads(1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(
            a_cancel_before_the_call_returns_at_once_with_nothing_allocated),
        cmocka_unit_test(
            a_deadline_already_passed_returns_at_once_with_nothing_allocated),
        cmocka_unit_test(
            a_cancel_from_another_thread_ends_the_attack_request_at_once),
        cmocka_unit_test(
            a_cancel_from_another_thread_ends_every_pass_over_the_pool),
        cmocka_unit_test(a_cancel_in_the_attention_ends_it_within_a_block),
        cmocka_unit_test(a_deadline_in_the_middle_ends_the_pass_with_deadline),
        cmocka_unit_test(a_stop_at_any_block_ends_the_pass_cleanly),
        cmocka_unit_test(a_stop_in_the_output_projection_saves_its_work),
        cmocka_unit_test(a_stop_that_never_fires_changes_no_bit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
