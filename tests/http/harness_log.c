/*
 * harness_log.c - the server's access log, read back as JSON lines
 * (harness.h).
 */
#include "tests/http/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the access log --------------------------------------------------- */

json_t *access_log_lines(const char *path, bool whole)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    bytes text = {0};
    char chunk[65536];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0)
        bytes_append(&text, chunk, got);
    fclose(f);
    json_t *lines = json_array();
    char *at = text.data;
    while (at && *at) {
        char *end = strchr(at, '\n');
        if (!end && !whole)
            break; /* being written */
        if (!end)
            fail_msg("a line without its newline: %.200s", at);
        *end = '\0';
        json_error_t err;
        json_t *line = json_loads(at, 0, &err);
        if (!json_is_object(line))
            fail_msg("not a JSON object line: %.200s", at);
        json_array_append_new(lines, line);
        at = end + 1;
    }
    free(text.data);
    return lines;
}

long access_log_index(json_t *lines, const char *id)
{
    size_t i;
    json_t *line;
    json_array_foreach(lines, i, line)
    {
        const char *rid =
            json_string_value(json_object_get(line, "request_id"));
        if (rid && strcmp(rid, id) == 0)
            return (long)i;
    }
    return -1;
}

json_t *access_log_wait(const char *path, const char *id, double wait_ms)
{
    double deadline = now_ms() + wait_ms;
    for (;;) {
        json_t *lines = access_log_lines(path, false);
        long at = access_log_index(lines, id);
        json_t *line =
            at >= 0 ? json_incref(json_array_get(lines, (size_t)at)) : NULL;
        json_decref(lines);
        if (line || now_ms() > deadline)
            return line;
        sleep_ms(5);
    }
}

json_t *expect_logged_client_gone(const char *path, const char *id,
                                  double wait_ms)
{
    json_t *line = access_log_wait(path, id, wait_ms);
    assert_non_null(line);
    assert_int_equal(json_integer_value(json_object_get(line, "status")), 499);
    assert_string_equal(json_string_value(json_object_get(line, "stopped")),
                        "client_gone");
    return line;
}

int logged_group_start(char path[LOG_PATH_MAX], const char *name,
                       const char *const *extra)
{
    snprintf(path, LOG_PATH_MAX, "/tmp/http-%s-%d.log", name, (int)getpid());
    memset(&g_srv, 0, sizeof g_srv);
    return server_start_logged(&g_srv, extra, path);
}

int logged_group_stop(void **state, const char *path)
{
    int failed = group_stop(state);
    unlink(path);
    return failed;
}
