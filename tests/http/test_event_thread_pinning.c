/*
 * test_event_thread_pinning.c - with --pin-event-threads on, each event
 * thread that served a connection stays on one CPU of those the process
 * was started with, a different one each while there are enough; without
 * it, the event threads keep the whole set.
 *
 * The event threads are libmicrohttpd's, named "MHD-worker" (what
 * `top -H` shows); their CPUs are read from /proc/<server>/task/<tid>/status
 * (Cpus_allowed_list).  A thread pins itself on the first connection it
 * accepts, and only an idle thread accepts: each connection sends a heavy
 * request computed on the event thread (--fast-lane all), so that the
 * next one is accepted by another thread, until every thread has one.
 *
 * Three groups: "pinned" (every thread on a CPU of its own), "confined"
 * (the server started on the test's last CPU only: both threads there)
 * and "untouched" (the default: the whole set).
 */
#include "tests/http/harness.h"

#include <dirent.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Event threads of the "pinned" group: as many as the test may use CPUs,
 * at most this many (each needs a heavy request to be reached). */
#define PINNED_THREADS_MAX 4
/* Connections opened at most while waiting for every event thread to have
 * accepted one (each holds its thread busy computing until it is closed). */
#define CONNECTIONS_MAX 24
/* How long one connection waits for a thread to take it. */
#define ACCEPT_WAIT_MS 2000
/* Connections of the "untouched" group, each given this long: as many as
 * the event threads, twice, so that each has served some. */
#define UNTOUCHED_CONNECTIONS 4
#define UNTOUCHED_WAIT_MS 50

typedef struct {
    int count;          /* event threads found */
    int pinned;         /* of them, on exactly one CPU */
    cpu_set_t cpus[64]; /* each thread's allowed CPUs */
} event_threads;

/* "0-3,8,10-11" → set. */
static void parse_cpu_list(const char *list, cpu_set_t *set)
{
    CPU_ZERO(set);
    while (*list >= '0' && *list <= '9') {
        char *end;
        long lo = strtol(list, &end, 10), hi = lo;
        if (*end == '-')
            hi = strtol(end + 1, &end, 10);
        for (long c = lo; c <= hi && c < CPU_SETSIZE; c++)
            CPU_SET((int)c, set);
        list = *end == ',' ? end + 1 : end;
    }
}

static bool read_line_of(const char *path, const char *prefix, char *out,
                         size_t size)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    bool found = false;
    char line[512];
    while (!found && fgets(line, sizeof line, f))
        if (strncmp(line, prefix, strlen(prefix)) == 0) {
            snprintf(out, size, "%s", line + strlen(prefix));
            found = true;
        }
    fclose(f);
    return found;
}

/* The server's event threads and the CPUs each may run on. */
static event_threads read_event_threads(pid_t pid)
{
    event_threads t = {0};
    char dir[32];
    snprintf(dir, sizeof dir, "/proc/%d/task", (int)pid);
    DIR *d = opendir(dir);
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d)) && t.count < 64;) {
        if (e->d_name[0] == '.')
            continue;
        char path[400], name[64] = "", list[256];
        snprintf(path, sizeof path, "%s/%s/comm", dir, e->d_name);
        if (!read_line_of(path, "", name, sizeof name) ||
            strcmp(name, "MHD-worker\n") != 0)
            continue;
        snprintf(path, sizeof path, "%s/%s/status", dir, e->d_name);
        if (!read_line_of(path, "Cpus_allowed_list:\t", list, sizeof list))
            continue;
        parse_cpu_list(list, &t.cpus[t.count]);
        if (CPU_COUNT(&t.cpus[t.count]) == 1)
            t.pinned++;
        t.count++;
    }
    closedir(d);
    return t;
}

/* Opens connections, each computing a heavy request on the thread that
 * accepts it, until `want` event threads are pinned or `most` are open,
 * each given up to wait_ms to be taken; then closes them all.  Returns
 * the threads as they are. */
static event_threads serve_until_pinned(int want, int most, double wait_ms)
{
    char *body = heavy_body(HEAVY_N, HEAVY_D);
    int fds[CONNECTIONS_MAX];
    int open = 0;
    event_threads t = read_event_threads(g_srv.pid);
    while (t.pinned < want && open < most && open < CONNECTIONS_MAX) {
        int before = t.pinned;
        fds[open++] = raw_post_v1(body, "");
        double deadline = now_ms() + wait_ms;
        do {
            sleep_ms(5);
            t = read_event_threads(g_srv.pid);
        } while (t.pinned == before && now_ms() < deadline);
    }
    for (int i = 0; i < open; i++)
        close(fds[i]);
    free(body);
    return t;
}

static cpu_set_t test_cpus(void)
{
    cpu_set_t set;
    assert_int_equal(sched_getaffinity(0, sizeof set, &set), 0);
    return set;
}

static int last_cpu(const cpu_set_t *set)
{
    int last = -1;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, set))
            last = c;
    return last;
}

/* ======================================================================= */
/* group "pinned": one event thread per CPU the test may use (up to 4)     */
/* ======================================================================= */

static char pinned_threads_arg[16];

static int pinned_setup(void **state)
{
    (void)state;
    cpu_set_t cpus = test_cpus();
    int threads = CPU_COUNT(&cpus);
    if (threads > PINNED_THREADS_MAX)
        threads = PINNED_THREADS_MAX;
    snprintf(pinned_threads_arg, sizeof pinned_threads_arg, "%d", threads);
    const char *extra[] = {"--pin-event-threads",
                           "on",
                           "--event-threads",
                           pinned_threads_arg,
                           "--fast-lane",
                           "all",
                           NULL};
    return group_start(extra);
}

static void each_event_thread_takes_a_cpu_of_its_own(void **state)
{
    (void)state;
    int threads = atoi(pinned_threads_arg);
    cpu_set_t allowed = test_cpus();
    event_threads t =
        serve_until_pinned(threads, CONNECTIONS_MAX, ACCEPT_WAIT_MS);
    assert_int_equal(t.count, threads);
    assert_int_equal(t.pinned, threads); /* every one served a connection */
    cpu_set_t taken;
    CPU_ZERO(&taken);
    for (int i = 0; i < t.count; i++) {
        int cpu = last_cpu(&t.cpus[i]);
        assert_true(CPU_ISSET(cpu, &allowed));
        assert_false(CPU_ISSET(cpu, &taken)); /* distinct CPUs */
        CPU_SET(cpu, &taken);
    }
}

/* ======================================================================= */
/* group "confined": the server started on the test's last CPU only        */
/* ======================================================================= */

static int confined_cpu = -1;

static int confined_setup(void **state)
{
    (void)state;
    cpu_set_t all = test_cpus(), one;
    confined_cpu = last_cpu(&all);
    CPU_ZERO(&one);
    CPU_SET(confined_cpu, &one);
    /* the server inherits the test's CPUs, as from `taskset -c N` */
    if (sched_setaffinity(0, sizeof one, &one) != 0)
        return -1;
    const char *extra[] = {"--pin-event-threads",
                           "on",
                           "--event-threads",
                           "2",
                           "--fast-lane",
                           "all",
                           NULL};
    int started = group_start(extra);
    sched_setaffinity(0, sizeof all, &all);
    return started;
}

static void event_threads_stay_on_the_one_cpu_allowed(void **state)
{
    (void)state;
    event_threads t = serve_until_pinned(2, CONNECTIONS_MAX, ACCEPT_WAIT_MS);
    assert_int_equal(t.count, 2);
    assert_int_equal(t.pinned, 2); /* two threads, one CPU: they wrap */
    for (int i = 0; i < t.count; i++)
        assert_true(CPU_ISSET(confined_cpu, &t.cpus[i]));
}

/* ======================================================================= */
/* group "untouched": the default leaves every event thread its CPUs       */
/* ======================================================================= */

static int untouched_setup(void **state)
{
    (void)state;
    const char *extra[] = {"--event-threads", "2", "--fast-lane", "all", NULL};
    return group_start(extra);
}

static void event_threads_keep_every_cpu_by_default(void **state)
{
    (void)state;
    cpu_set_t allowed = test_cpus();
    event_threads t =
        serve_until_pinned(1, UNTOUCHED_CONNECTIONS, UNTOUCHED_WAIT_MS);
    assert_int_equal(t.count, 2);
    for (int i = 0; i < t.count; i++)
        assert_true(CPU_EQUAL(&t.cpus[i], &allowed));
}

int main(void)
{
    if (harness_init() != 0)
        return 1;
    const struct CMUnitTest pinned[] = {
        cmocka_unit_test(each_event_thread_takes_a_cpu_of_its_own),
    };
    const struct CMUnitTest confined[] = {
        cmocka_unit_test(event_threads_stay_on_the_one_cpu_allowed),
    };
    const struct CMUnitTest untouched[] = {
        cmocka_unit_test(event_threads_keep_every_cpu_by_default),
    };
    int failed =
        cmocka_run_group_tests_name("pinned", pinned, pinned_setup, group_stop);
    failed += cmocka_run_group_tests_name("confined", confined, confined_setup,
                                          group_stop);
    failed += cmocka_run_group_tests_name("untouched", untouched,
                                          untouched_setup, group_stop);
    harness_done();
    return failed ? 1 : 0;
}
