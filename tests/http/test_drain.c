/*
 * test_drain.c - SIGTERM while requests are in flight: the server finishes
 * them and exits 0; a second SIGTERM mid-drain cancels what is left,
 * answers it and exits 0 at once (tests/robust/test_faults.py stops
 * computations that run past --grace and after a second signal).
 *
 * One group, "drain", on a server with --threads 1 --grace 15 --fast-lane
 * off, whatever lane the suite runs with: the heavy requests wait for the
 * one worker, each read and in flight when SIGTERM arrives.  (With
 * --fast-lane all an event thread computing one heavy request has not yet
 * read the next one on its connections; such a request is not in flight
 * yet, and the drain does not wait for it.)  Each test stops its own
 * server.
 */
#include "tests/http/harness.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>

/* ---- constants -------------------------------------------------------- */

/* Heavy requests in flight on one worker when SIGTERM arrives. */
#define DRAIN_CLIENTS 4

/* Waits until the server has read the headers of `count` requests besides
 * the /metrics request that asks (a body sent whole may still wait in the
 * socket, unread, on a busy machine); false if it never does. */
static bool server_has_in_flight(long count)
{
    double deadline = now_ms() + START_WAIT_MS;
    while (in_flight_requests() < count + 1)
        if (now_ms() > deadline)
            return false;
    return true;
}

/* ======================================================================= */
/* group "drain": SIGTERM while requests are in flight                     */
/* ======================================================================= */

static int drain_setup(void **state)
{
    (void)state;
    /* 4 heavy jobs on one worker take about 3.5 s here: a grace period
     * well beyond that, so that only a real failure to drain fails */
    const char *extra[] = {"--threads",   "1",   "--grace", "15",
                           "--fast-lane", "off", NULL};
    return group_start(extra);
}

static int drain_teardown(void **state)
{
    (void)state;
    if (g_srv.pid > 0) /* the test failed before stopping it */
        server_stop(&g_srv);
    return 0;
}

static void sigterm_finishes_in_flight_requests_and_exits_0(void **state)
{
    (void)state;
    char *body = heavy_body(HEAVY_N, HEAVY_D);
    pthread_t threads[DRAIN_CLIENTS];
    heavy_client clients[DRAIN_CLIENTS];
    atomic_int uploaded = 0;
    for (int i = 0; i < DRAIN_CLIENTS; i++) {
        clients[i] = (heavy_client){.body = body, .uploaded = &uploaded};
        assert_int_equal(
            pthread_create(&threads[i], NULL, heavy_request, &clients[i]), 0);
    }
    /* every body is on the server (queued or computing): now SIGTERM */
    double deadline = now_ms() + START_WAIT_MS;
    while (atomic_load(&uploaded) < DRAIN_CLIENTS && now_ms() < deadline)
        sleep_ms(1);
    assert_int_equal(atomic_load(&uploaded), DRAIN_CLIENTS);
    assert_true(server_has_in_flight(DRAIN_CLIENTS));
    double signalled = now_ms();
    int status = server_stop(&g_srv);
    double stopped = now_ms();
    int ok = 0;
    for (int i = 0; i < DRAIN_CLIENTS; i++) {
        pthread_join(threads[i], NULL);
        if (clients[i].status == 200 && clients[i].correct)
            ok++;
        else
            print_error("in-flight client %d: status %ld\n", i,
                        clients[i].status);
    }
    free(body);
    print_message("drained %d in-flight requests in %.0f ms\n", ok,
                  stopped - signalled);
    assert_int_equal(ok, DRAIN_CLIENTS);
    assert_true(status != -1 && WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

/* How soon after a second SIGTERM the process must be gone. */
#define SECOND_SIGNAL_EXIT_MS 1000

static void
second_sigterm_during_drain_answers_and_exits_0_at_once(void **state)
{
    (void)state;
    /* a second signal (Ctrl-C twice, an impatient orchestrator) cancels
     * what is left, as nginx's fast shutdown does: the request is
     * answered (200 if it was done, else 503 draining), never dropped */
    assert_int_equal(
        group_start((const char *[]){"--threads", "1", "--grace", "15",
                                     "--fast-lane", "off", NULL}),
        0);
    char *body = heavy_body(HEAVY_N, HEAVY_D);
    pthread_t thread;
    atomic_int uploaded = 0;
    heavy_client client = {.body = body, .uploaded = &uploaded};
    assert_int_equal(pthread_create(&thread, NULL, heavy_request, &client), 0);
    double deadline = now_ms() + START_WAIT_MS;
    while (atomic_load(&uploaded) < 1 && now_ms() < deadline)
        sleep_ms(1);
    assert_true(server_has_in_flight(1));
    kill(g_srv.pid, SIGTERM);
    sleep_ms(100);
    double second = now_ms();
    int status = server_stop(&g_srv); /* the second SIGTERM, then wait */
    double took = now_ms() - second;
    pthread_join(thread, NULL);
    free(body);
    print_message("in-flight request: %ld; wait status %d, %.0f ms after the "
                  "second SIGTERM\n",
                  client.status, status, took);
    if (status == -1 || !WIFEXITED(status))
        fail_msg("the server %s",
                 status != -1 && WIFSIGNALED(status)
                     ? "was killed by the second signal instead of draining"
                     : "did not exit");
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_true(client.status == 200 || client.status == 503);
    assert_true(took < SECOND_SIGNAL_EXIT_MS);
}

/* ======================================================================= */

int main(void)
{
    if (harness_init() != 0)
        return 1;

    const struct CMUnitTest drain[] = {
        cmocka_unit_test(sigterm_finishes_in_flight_requests_and_exits_0),
        cmocka_unit_test_teardown(
            second_sigterm_during_drain_answers_and_exits_0_at_once,
            drain_teardown),
    };

    int failed = cmocka_run_group_tests_name("drain", drain, drain_setup,
                                             drain_teardown);
    harness_done();
    return failed ? 1 : 0;
}
