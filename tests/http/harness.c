/*
 * harness.c - the shared half of the HTTP tests (harness.h): the
 * program's set-up, the lesson's numbers, and the server process each group
 * starts and stops; the clients and assertions are in harness_*.c.
 */
#include "tests/http/harness.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- constants -------------------------------------------------------- */

/* How long the server may take to exit on SIGTERM. */
#define STOP_WAIT_MS 15000

/* Seconds SIGTERM waits for in-flight requests (--grace): short, so that a
 * request the server forgot to release cannot stall the suite for the 20 s
 * default (the drain group sets its own). */
#define GRACE_S "5"

/* Lesson 001 (seeds/001_*.txt): X, W_q, W_k, W_v as the lesson writes them. */
const char LESSON_001[] =
    "{\"x\":[[1.0,0.0,1.0,0.0],[0.0,2.0,0.0,2.0],[1.0,1.0,1.0,1.0]],"
    "\"w_q\":[[0.1,0.2,0.0,0.0],[0.0,0.1,0.3,0.0],[0.1,0.0,0.0,0.2],"
    "[0.0,0.0,0.2,0.3]],"
    "\"w_k\":[[0.2,0.0,0.1,0.0],[0.0,0.1,0.0,0.3],[0.1,0.0,0.2,0.0],"
    "[0.0,0.2,0.0,0.1]],"
    "\"w_v\":[[0.0,0.1,0.0,0.2],[0.2,0.0,0.2,0.0],[0.0,0.3,0.1,0.0],"
    "[0.1,0.0,0.0,0.3]]}";

/* NumPy 1.24 on the lesson's code: softmax(Q Kᵀ / √4) and weights @ V. */
const double LESSON_001_WEIGHTS[3][3] = {
    {0.31359894363028484, 0.35006362369355476, 0.33633743267616034},
    {0.300872365693425, 0.3495638171532875, 0.3495638171532875},
    {0.297684785421469, 0.35817982316456765, 0.34413539141396327},
};
const double LESSON_001_OUTPUT[3][4] = {
    {0.310939404018981, 0.2599745505225781, 0.27228657364329856,
     0.4409266792802701},
    {0.31460743543795877, 0.260174473138685, 0.27478190857664375,
     0.4446946720073013},
    {0.3181485113229296, 0.2567280707341729, 0.27628102523216297,
     0.44651254669001605},
};

/* ---- the program ------------------------------------------------------ */

int harness_init(void)
{
    signal(SIGPIPE, SIG_IGN);
    json_object_seed(0);
    if (getenv("HTTP_TEST_FILTER")) /* e.g. "*chunked*" */
        cmocka_set_test_filter(getenv("HTTP_TEST_FILTER"));
    return curl_global_init(CURL_GLOBAL_DEFAULT) == 0 ? 0 : -1;
}

void harness_done(void) { curl_global_cleanup(); }

/* ---- the server process ----------------------------------------------- */

server g_srv;

double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Starts the binary with the common flags plus `extra` (NULL-terminated).
 * Returns 0 and fills s, or -1 with a message printed. */
int server_start(server *s, const char *const *extra)
{
    return server_start_logged(s, extra, NULL);
}

int server_start_logged(server *s, const char *const *extra,
                        const char *log_path)
{
    const char *bin = getenv("ATTENTION_SERVER");
    if (!bin || !*bin) {
        fprintf(stderr, "set ATTENTION_SERVER to the server binary\n");
        return -1;
    }
    const char *argv[32] = {bin, "--listen", "127.0.0.1:0", "--threads",
                            "2", "--grace",  GRACE_S};
    size_t argc = 7;
    const char *lane = getenv("HTTP_TEST_LANE");
    if (lane && *lane) { /* before `extra`, which may choose its own */
        argv[argc++] = "--fast-lane";
        argv[argc++] = lane;
    }
    for (size_t i = 0; extra && extra[i] && argc < 31; i++)
        argv[argc++] = extra[i];
    argv[argc] = NULL;

    int out[2];
    if (pipe(out) != 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        dup2(out[1], STDOUT_FILENO);
        close(out[0]);
        close(out[1]);
        if (log_path) { /* the access log, for the test to read */
            int log = open(log_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
            dup2(log, STDERR_FILENO);
            close(log);
        } else if (!getenv("HTTP_TEST_VERBOSE")) {
            int null = open("/dev/null", O_WRONLY);
            dup2(null, STDERR_FILENO);
            close(null);
        }
        execv(bin, (char *const *)argv);
        _exit(127);
    }
    close(out[1]);

    /* first line: "attention-server 1.0.0 listening on http://H:PORT (...)" */
    char line[512];
    size_t len = 0;
    double deadline = now_ms() + START_WAIT_MS;
    while (len < sizeof line - 1 && !memchr(line, '\n', len)) {
        struct pollfd p = {.fd = out[0], .events = POLLIN};
        int left = (int)(deadline - now_ms());
        if (left <= 0 || poll(&p, 1, left) <= 0)
            break;
        ssize_t got = read(out[0], line + len, sizeof line - 1 - len);
        if (got <= 0)
            break;
        len += (size_t)got;
    }
    line[len] = '\0';
    close(out[0]);
    const char *at = strstr(line, "listening on http://127.0.0.1:");
    if (!at) {
        fprintf(stderr, "no banner from %s, got: %s\n", bin, line);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        return -1;
    }
    s->pid = pid;
    s->port = (unsigned)strtoul(at + strlen("listening on http://127.0.0.1:"),
                                NULL, 10);
    snprintf(s->base, sizeof s->base, "http://127.0.0.1:%u", s->port);
    return 0;
}

/* SIGTERM, then wait; returns the raw wait status, or -1 on a timeout (the
 * process is then killed). */
int server_stop(server *s)
{
    if (s->pid <= 0)
        return -1;
    kill(s->pid, SIGTERM);
    double deadline = now_ms() + STOP_WAIT_MS;
    int status = -1;
    for (;;) {
        pid_t r = waitpid(s->pid, &status, WNOHANG);
        if (r == s->pid)
            break;
        if (r < 0 || now_ms() > deadline) {
            kill(s->pid, SIGKILL);
            waitpid(s->pid, NULL, 0);
            status = -1;
            break;
        }
        sleep_ms(10);
    }
    s->pid = 0;
    return status;
}

bool server_alive(const server *s)
{
    return s->pid > 0 && waitpid(s->pid, NULL, WNOHANG) == 0;
}

int group_start(const char *const *extra)
{
    memset(&g_srv, 0, sizeof g_srv);
    return server_start(&g_srv, extra);
}

int group_stop(void **state)
{
    (void)state;
    int status = server_stop(&g_srv);
    if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "server did not exit 0 on SIGTERM (wait status %d)\n",
                status);
        return -1; /* cmocka reports a failed group teardown */
    }
    return 0;
}
