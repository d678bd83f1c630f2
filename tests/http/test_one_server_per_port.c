/*
 * test_one_server_per_port.c - a second server on a port already served exits
 * with status 1, and the first keeps answering.
 *
 * One group, "one_server_per_port", on a server with the default flags.
 */
#include "tests/http/harness.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

/* ======================================================================= */
/* group "one_server_per_port"                                             */
/* ======================================================================= */

static int one_server_per_port_setup(void **state)
{
    (void)state;
    return group_start(NULL);
}

/* With SO_REUSEPORT a second server would bind a port already served and
 * take a share of its connections, silently (two builds answering one
 * benchmark): it must fail to start instead. */
static void a_second_server_on_the_same_port_refuses_to_start(void **state)
{
    (void)state;
    char listen[32];
    snprintf(listen, sizeof listen, "127.0.0.1:%u", g_srv.port);
    const char *bin = getenv("ATTENTION_SERVER");
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, STDOUT_FILENO);
        dup2(null, STDERR_FILENO);
        execl(bin, bin, "--listen", listen, "--threads", "1", (char *)NULL);
        _exit(127);
    }
    int status = 0;
    double deadline = now_ms() + START_WAIT_MS;
    while (waitpid(pid, &status, WNOHANG) == 0) {
        if (now_ms() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, NULL, 0);
            fail_msg("a second server on port %u kept running", g_srv.port);
        }
        sleep_ms(10);
    }
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 1);
    http_response r = http(&(http_request){.path = "/healthz"});
    expect_status(&r, 200);
    response_free(&r);
}

/* ======================================================================= */

int main(void)
{
    if (harness_init() != 0)
        return 1;

    const struct CMUnitTest one_server_per_port[] = {
        cmocka_unit_test(a_second_server_on_the_same_port_refuses_to_start),
    };

    int failed =
        cmocka_run_group_tests_name("one_server_per_port", one_server_per_port,
                                    one_server_per_port_setup, group_stop);
    harness_done();
    return failed ? 1 : 0;
}
