/*
 * config.c - one table of options drives parsing, the environment and --help.
 */
#include "server/setup/config.h"
#include "server/setup/build_info.h"

#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* OPT_SIZE and OPT_BYTES parse alike (with a K, M or G suffix); a byte
 * count's default is printed in binary units. */
typedef enum {
    OPT_SIZE,
    OPT_BYTES,
    OPT_UINT,
    OPT_LISTEN,
    OPT_STRING,
    OPT_SOURCES, /* a CSP source list: printable ASCII, no ';' or ',' */
    OPT_BOOL,
    OPT_SIMD, /* an arch_simd level by name (core/arch.h) */
    OPT_LANE, /* a config_lane by name */
    OPT_WORK  /* a count of operations (1e12), or derived when negative */
} opt_kind;

typedef struct {
    const char *name;
    const char *value; /* --help's placeholder for the value */
    opt_kind kind;
    size_t offset, string_size;
    const char *help;
    /* --help's default when it is not a value of set_defaults() (depends on
     * the machine, or is empty), or NULL */
    const char *default_note;
    /* the default, which set_defaults() writes and --help and
     * docs/reliability.md's table of limits print: `initial` for a number,
     * a choice or on/off (1), `text` for a string or the address (as the
     * flag takes it); the online CPUs when per_cpu */
    double initial;
    const char *text;
    bool per_cpu;
    /* docs/reliability.md's table of limits: what a request or connection
     * beyond it gets (tools/gen_contract.c), or NULL when not a limit */
    const char *beyond;
} option_spec;

#define FIELD(f) offsetof(config, f)

static const option_spec options[] = {
    {"listen", "HOST:PORT", OPT_LISTEN, 0, 0, "the address to serve on", NULL,
     .text = "127.0.0.1:8080"},
    {"threads", "N", OPT_SIZE, FIELD(threads), 0, "worker threads",
     "online CPUs", .per_cpu = true},
    {"event-threads", "N", OPT_SIZE, FIELD(event_threads), 0,
     "HTTP event threads (libmicrohttpd's)", "online CPUs", .per_cpu = true},
    {"fast-lane", "auto|off|all", OPT_LANE, FIELD(fast_lane), 0,
     "requests computed on the event thread that received them: auto "
     "(small ones), off (none: all go to the workers) or all",
     NULL, .initial = CONFIG_LANE_AUTO},
    {"max-body", "BYTES", OPT_BYTES, FIELD(max_body), 0,
     "largest request body in bytes", NULL, .initial = LIMIT_DEFAULT_MAX_BODY,
     .beyond = "413, decided from Content-Length before reading; a chunked "
               "body is cut off"},
    {"max-tokens", "N", OPT_SIZE, FIELD(request.max_tokens), 0,
     "largest n or m", NULL, .initial = LIMIT_DEFAULT_MAX_TOKENS,
     .beyond = "413 `limit_exceeded` for a larger n or m"},
    {"max-width", "N", OPT_SIZE, FIELD(request.max_width), 0,
     "largest d, d_c, h*d_k, h*d_v or d_out", NULL,
     .initial = LIMIT_DEFAULT_MAX_WIDTH,
     .beyond = "413 for a larger d, d_c, h·d_k, h·d_v or d_out"},
    {"max-heads", "N", OPT_SIZE, FIELD(request.max_heads), 0,
     "largest num_heads", NULL, .initial = LIMIT_DEFAULT_MAX_HEADS,
     .beyond = "413 for more heads"},
    {"max-elements", "N", OPT_SIZE, FIELD(request.max_elements), 0,
     "most numbers in one request", NULL, .initial = LIMIT_DEFAULT_MAX_ELEMENTS,
     .beyond = "413 for more numbers in one request"},
    {"max-work", "OPS", OPT_WORK, FIELD(request.max_work), 0,
     "most operations one request may ask for (its work estimate), then 413 "
     "limit_exceeded before it runs; 0: no cap",
     NULL, .initial = -1, /* derived from --compute-timeout */
     .beyond = "413 `limit_exceeded` at once, before the request runs, the "
               "detail naming its work estimate and the cap ([The work "
               "cap](#the-work-cap)); 0: no cap"},
    {"max-request-memory", "BYTES", OPT_BYTES,
     FIELD(request.max_request_memory), 0,
     "bytes one request may need to compute", NULL,
     .initial = LIMIT_DEFAULT_MAX_REQUEST_MEMORY,
     .beyond = "413: the memory a request needs (inputs, every stage it "
               "keeps, its reply) is computed with overflow-checked "
               "arithmetic before anything is allocated"},
    {"memory-budget", "BYTES", OPT_BYTES, FIELD(memory_budget), 0,
     "bytes all in-flight requests may hold", NULL,
     .initial = LIMIT_DEFAULT_MEMORY_BUDGET,
     .beyond =
         "503 `overloaded` with `Retry-After`: the memory all requests in "
         "flight hold, reserved before it is allocated ([Memory](#memory) "
         "below); an upload that does not fit now is refused from its "
         "Content-Length before its body is read. A body that would not fit "
         "even an idle server's budget (with what parsing it needs: more than "
         "`--memory-budget` / 37 bytes) is 413 `limit_exceeded` at once, the "
         "detail naming the largest body the budget admits: a retry could "
         "never help; so is a computation whose memory (inputs, stages, "
         "reply) is more than the whole budget, the detail naming both in "
         "bytes (`make test-http`, `test_overload`)"},
    {"max-queue", "N", OPT_SIZE, FIELD(max_queue), 0,
     "requests waiting for a worker before 503", NULL,
     .initial = LIMIT_DEFAULT_MAX_QUEUE,
     .beyond = "503 `overloaded` with `Retry-After`: requests waiting for a "
               "worker"},
    {"max-connections", "N", OPT_UINT, FIELD(max_connections), 0,
     "open connections in all", NULL, .initial = LIMIT_DEFAULT_MAX_CONNECTIONS,
     .beyond = "new connections refused"},
    {"max-connections-per-ip", "N", OPT_UINT, FIELD(max_connections_per_ip), 0,
     "open connections per client address", NULL,
     .initial = LIMIT_DEFAULT_MAX_CONNECTIONS_PER_IP,
     .beyond = "new connections from that address refused"},
    {"idle-timeout", "SECONDS", OPT_UINT, FIELD(idle_timeout), 0,
     "seconds a silent connection stays open", NULL,
     .initial = LIMIT_DEFAULT_IDLE_TIMEOUT,
     .beyond = "a silent connection is closed"},
    {"request-timeout", "SECONDS", OPT_UINT, FIELD(request_timeout), 0,
     "seconds a request may take to arrive", NULL,
     .initial = LIMIT_DEFAULT_REQUEST_TIMEOUT,
     .beyond = "a request that has not fully arrived is cut off, however "
               "slowly it trickles (slowloris, slow bodies)"},
    {"min-send-rate", "BYTES", OPT_BYTES, FIELD(min_send_rate), 0,
     "bytes a second a reply must be read at (after --request-timeout)", NULL,
     .initial = LIMIT_DEFAULT_MIN_SEND_RATE,
     .beyond = "bytes a second: a reply not read within `--request-timeout` "
               "plus its size at this rate is cut off (the connection is "
               "reset) and its memory freed"},
    {"compute-timeout", "SECONDS", OPT_UINT, FIELD(compute_timeout), 0,
     "seconds a computation may take from its request's arrival, then 503 "
     "compute_timeout (0: no limit)",
     NULL, .initial = LIMIT_DEFAULT_COMPUTE_TIMEOUT,
     .beyond = "503 `compute_timeout` with `Retry-After`: a computation still "
               "running this long after its request arrived is stopped "
               "([Stopping a computation](#stopping-a-computation)); 0: no "
               "limit"},
    {"grace", "SECONDS", OPT_UINT, FIELD(grace), 0,
     "seconds SIGTERM waits for in-flight requests", NULL,
     .initial = LIMIT_DEFAULT_GRACE},
    {"api-key-file", "PATH", OPT_STRING, FIELD(api_key_file),
     sizeof(((config *)0)->api_key_file),
     "file holding the bearer token that POST /v1/attention, "
     "/v2/models/attention/infer and "
     "/v2/models/attention/versions/1/infer require",
     "none", .text = ""},
    {"cors-origins", "ORIGINS", OPT_STRING, FIELD(cors_origins),
     sizeof(((config *)0)->cors_origins),
     "comma-separated origins allowed by CORS, or *", NULL, .text = "*"},
    {"frame-ancestors", "SOURCES", OPT_SOURCES, FIELD(frame_ancestors),
     sizeof(((config *)0)->frame_ancestors),
     "the pages that may frame GET /embed (its Content-Security-Policy "
     "frame-ancestors: space-separated sources such as 'self' "
     "https://lms.example; * any page)",
     NULL, .text = "*"},
    {"access-log", "on|off", OPT_BOOL, FIELD(access_log), 0,
     "one JSON line per request on stderr: on or off", NULL, .initial = 1},
    {"spread-loops", "on|off", OPT_BOOL, FIELD(spread_loops), 0,
     "a parallel loop's helpers leave its caller's CPU: on or off", NULL,
     .initial = 1},
    /* off by default: a pinned thread cannot leave its CPU when another
     * process keeps that CPU busy (a shared host, a neighbour in the same
     * cpuset), where an unpinned one migrates away; what it lowered on the
     * benchmark's machine came from where wrk, beside the server, let the
     * connections fall (docs/performance.md, "Pinned event threads, and
     * one event thread").  For CPUs given to the server alone: no
     * migrations, each thread keeps its caches */
    {"pin-event-threads", "on|off", OPT_BOOL, FIELD(pin_event_threads), 0,
     "each HTTP event thread stays on one CPU of those the process may use, "
     "in turn from its first connection: on or off",
     NULL, .initial = 0},
    {"kernels", "auto|avx2|generic", OPT_SIMD, FIELD(kernels), 0,
     "SIMD the core may use: auto (the CPU's best), avx2 (no AVX-512: "
     "products by OpenBLAS) or generic",
     "auto", .initial = ARCH_SIMD_COUNT - 1 /* no cap: what the CPU runs */},
};

#define OPTION_COUNT (sizeof options / sizeof *options)

/* --fast-lane's values, by config_lane. */
static const char *const lane_names[] = {"auto", "off", "all"};

/* "max-body" → "ATTENTION_MAX_BODY" */
static void env_name(const option_spec *opt, char *env, size_t size)
{
    size_t len = (size_t)snprintf(env, size, "ATTENTION_");
    for (const char *c = opt->name; *c && len < size - 1; c++)
        env[len++] = *c == '-' ? '_' : (char)(*c - 'a' + 'A');
    env[len] = '\0';
}

static bool set_option(config *cfg, const option_spec *opt, const char *value);

/* The option's default (its row's initial, text or per_cpu) into cfg.  Each
 * kind converts the row's number itself: a -1 (derived later) is a double's
 * only, and turned into an unsigned type it would be undefined behaviour. */
static void set_default(config *cfg, const option_spec *opt)
{
    char *field = (char *)cfg + opt->offset;
    double value = opt->initial;
    if (opt->per_cpu) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        value = cpus > 0 ? (double)cpus : 1;
    }
    switch (opt->kind) {
    case OPT_SIZE:
    case OPT_BYTES: {
        size_t size = (size_t)value;
        memcpy(field, &size, sizeof size);
        return;
    }
    case OPT_UINT: {
        unsigned u = (unsigned)value;
        memcpy(field, &u, sizeof u);
        return;
    }
    case OPT_BOOL: {
        bool on = value != 0;
        memcpy(field, &on, sizeof on);
        return;
    }
    case OPT_SIMD: {
        arch_simd level = (arch_simd)value;
        memcpy(field, &level, sizeof level);
        return;
    }
    case OPT_LANE: {
        config_lane lane = (config_lane)value;
        memcpy(field, &lane, sizeof lane);
        return;
    }
    case OPT_WORK:
        memcpy(field, &value, sizeof value);
        return;
    case OPT_LISTEN:
    case OPT_STRING:
    case OPT_SOURCES:
        /* a text the flag itself takes: a row's typo stops every start */
        if (opt->text && !set_option(cfg, opt, opt->text))
            abort();
        return;
    }
}

/* Every option's default, from its row. */
static void set_defaults(config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    for (size_t i = 0; i < sizeof options / sizeof *options; i++)
        set_default(cfg, &options[i]);
}

/* "16 MiB" for a byte count that is a whole number of a binary unit. */
static void format_bytes(char *out, size_t size, size_t bytes)
{
    static const struct {
        unsigned shift;
        const char *name;
    } units[] = {{30, "GiB"}, {20, "MiB"}, {10, "KiB"}};
    for (size_t u = 0; u < sizeof units / sizeof *units; u++) {
        size_t unit = (size_t)1 << units[u].shift;
        if (bytes >= unit && bytes % unit == 0) {
            snprintf(out, size, "%zu %s", bytes / unit, units[u].name);
            return;
        }
    }
    snprintf(out, size, "%zu", bytes);
}

/* --max-work's default: what one core computes in --compute-timeout (no
 * cap without a timeout). */
static double derived_max_work(const config *cfg)
{
    return LIMIT_WORK_PER_CORE_SECOND * cfg->compute_timeout;
}

/* The option's value in defaults, as --help shows it. */
static void format_default(char *out, size_t size, const option_spec *opt,
                           const config *defaults)
{
    const char *field = (const char *)defaults + opt->offset;
    size_t value;
    unsigned u;
    bool on;
    switch (opt->kind) {
    case OPT_SIZE:
        memcpy(&value, field, sizeof value);
        snprintf(out, size, "%zu", value);
        return;
    case OPT_BYTES:
        memcpy(&value, field, sizeof value);
        format_bytes(out, size, value);
        return;
    case OPT_UINT:
        memcpy(&u, field, sizeof u);
        snprintf(out, size, "%u", u);
        return;
    case OPT_LISTEN:
        snprintf(out, size, "%s:%u", defaults->host, defaults->port);
        return;
    case OPT_STRING:
    case OPT_SOURCES:
        snprintf(out, size, "%s", field);
        return;
    case OPT_BOOL:
        memcpy(&on, field, sizeof on);
        snprintf(out, size, "%s", on ? "on" : "off");
        return;
    case OPT_SIMD: {
        arch_simd level;
        memcpy(&level, field, sizeof level);
        snprintf(out, size, "%s", arch_simd_name(level));
        return;
    }
    case OPT_LANE: {
        config_lane lane;
        memcpy(&lane, field, sizeof lane);
        snprintf(out, size, "%s", lane_names[lane]);
        return;
    }
    case OPT_WORK: {
        double work;
        memcpy(&work, field, sizeof work);
        if (work < 0)
            snprintf(out, size,
                     "%.3g: what one core computes in --compute-timeout, "
                     "%.3g a second",
                     derived_max_work(defaults), LIMIT_WORK_PER_CORE_SECOND);
        else
            snprintf(out, size, "%.3g", work);
        return;
    }
    }
    out[0] = '\0';
}

/* --help's layout: the flag and its value, then the text from this column
 * on, wrapped within HELP_WIDTH columns (a terminal's 100). */
#define HELP_TEXT_COLUMN 32
#define HELP_WIDTH 100

/* Prints `text` from column HELP_TEXT_COLUMN (the cursor is at `column`),
 * wrapped at spaces within HELP_WIDTH. */
static void print_wrapped(FILE *out, size_t column, const char *text)
{
    const size_t room = HELP_WIDTH - HELP_TEXT_COLUMN;
    while (*text) {
        fprintf(out, "%*s", (int)(HELP_TEXT_COLUMN - column), "");
        size_t len = strlen(text);
        if (len > room) { /* the last space that fits, else a long word */
            len = room;
            while (len > 0 && text[len] != ' ')
                len--;
            if (len == 0)
                len = strcspn(text, " ");
        }
        fprintf(out, "%.*s\n", (int)len, text);
        text += len;
        while (*text == ' ')
            text++;
        column = 0;
    }
}

static void print_help(FILE *out, const char *argv0)
{
    config defaults;
    set_defaults(&defaults);
    fprintf(out,
            "Usage: %s [OPTIONS]\n"
            "Serves transformer attention over HTTP (POST /v1/attention).\n"
            "Sizes take a K, M or G suffix; every flag has the environment "
            "variable shown.\n\n",
            argv0);
    for (size_t i = 0; i < OPTION_COUNT; i++) {
        const option_spec *opt = &options[i];
        /* a default is at most as long as the longest string option */
        char env[64], value[sizeof defaults.cors_origins];
        char help[sizeof value + 320];
        env_name(opt, env, sizeof env);
        if (opt->default_note) {
            snprintf(help, sizeof help, "%s (default: %s)", opt->help,
                     opt->default_note);
        } else {
            format_default(value, sizeof value, opt, &defaults);
            snprintf(help, sizeof help, "%s (default %s)", opt->help, value);
        }
        int flag = fprintf(out, "  --%s %s", opt->name, opt->value);
        print_wrapped(out, flag < 0 ? 0 : (size_t)flag, help);
        fprintf(out, "%*senv %s\n", HELP_TEXT_COLUMN, "", env);
    }
    int flag = fprintf(out, "  --help");
    print_wrapped(out, (size_t)flag, "this text");
    flag = fprintf(out, "  --version");
    print_wrapped(out, (size_t)flag,
                  "print the version, the architecture and the kernels in "
                  "use");
}

void config_print_limits(FILE *out)
{
    config defaults;
    set_defaults(&defaults);
    fprintf(out, "| flag | default | beyond it |\n| --- | --- | --- |\n");
    for (size_t i = 0; i < OPTION_COUNT; i++) {
        const option_spec *opt = &options[i];
        char value[sizeof defaults.cors_origins];
        if (!opt->beyond)
            continue;
        format_default(value, sizeof value, opt, &defaults);
        fprintf(out, "| `--%s` | %s%s | %s |\n", opt->name, value,
                strcmp(opt->value, "SECONDS") == 0 ? " s" : "", opt->beyond);
    }
}

static void print_version(const config *cfg)
{
    build_info info = build_info_apply(cfg->kernels);
    printf("attention-server %s\n", CONFIG_VERSION);
    build_info_print(stdout, &info);
}

static bool parse_size(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    if (!*s || *s == '-')
        return false;
    unsigned long long v = strtoull(s, &end, 10);
    unsigned long long mult = 1;
    if (*end == 'K' || *end == 'k')
        mult = 1ull << 10, end++;
    else if (*end == 'M' || *end == 'm')
        mult = 1ull << 20, end++;
    else if (*end == 'G' || *end == 'g')
        mult = 1ull << 30, end++;
    if (errno || *end || v > SIZE_MAX / mult)
        return false;
    *out = (size_t)(v * mult);
    return true;
}

static bool set_option(config *cfg, const option_spec *opt, const char *value)
{
    char *field = (char *)cfg + opt->offset;
    size_t size;
    switch (opt->kind) {
    case OPT_SIZE:
    case OPT_BYTES:
        if (!parse_size(value, &size) || size == 0)
            return false;
        memcpy(field, &size, sizeof size);
        return true;
    case OPT_UINT: {
        if (!parse_size(value, &size) || size > 1000000)
            return false;
        unsigned u = (unsigned)size;
        memcpy(field, &u, sizeof u);
        return true;
    }
    case OPT_BOOL: {
        bool on = strcmp(value, "on") == 0 || strcmp(value, "true") == 0 ||
                  strcmp(value, "1") == 0;
        bool off = strcmp(value, "off") == 0 || strcmp(value, "false") == 0 ||
                   strcmp(value, "0") == 0;
        if (!on && !off)
            return false;
        memcpy(field, &on, sizeof on);
        return true;
    }
    case OPT_SOURCES: /* one directive's value: nothing that ends it */
        if (!*value || strpbrk(value, ";,"))
            return false;
        for (const char *c = value; *c; c++)
            if (*c < ' ' || *c > '~')
                return false;
        /* fall through */
    case OPT_STRING:
        if (strlen(value) >= opt->string_size)
            return false;
        strcpy(field, value);
        return true;
    case OPT_SIMD: {
        arch_simd level;
        if (!arch_simd_parse(value, &level))
            return false;
        memcpy(field, &level, sizeof level);
        return true;
    }
    case OPT_WORK: {
        char *end;
        errno = 0;
        double work = strtod(value, &end);
        if (errno || end == value || *end || !(work >= 0) || work > 1e30)
            return false;
        memcpy(field, &work, sizeof work);
        return true;
    }
    case OPT_LANE:
        for (config_lane lane = CONFIG_LANE_AUTO; lane <= CONFIG_LANE_ALL;
             lane++)
            if (strcmp(value, lane_names[lane]) == 0) {
                memcpy(field, &lane, sizeof lane);
                return true;
            }
        return false;
    case OPT_LISTEN: {
        const char *colon = strrchr(value, ':');
        if (!colon || (size_t)(colon - value) >= sizeof cfg->host ||
            !parse_size(colon + 1, &size) || size > 65535)
            return false;
        memcpy(cfg->host, value, (size_t)(colon - value));
        cfg->host[colon - value] = '\0';
        cfg->port = (unsigned)size;
        return true;
    }
    }
    return false;
}

config_action config_parse(config *cfg, int argc, char **argv)
{
    set_defaults(cfg);
    for (size_t i = 0; i < OPTION_COUNT; i++) {
        char env[64];
        env_name(&options[i], env, sizeof env);
        const char *value = getenv(env);
        if (value && !set_option(cfg, &options[i], value)) {
            fprintf(stderr, "invalid value for %s: %s\n", env, value);
            return CONFIG_EXIT_ERROR;
        }
    }
    struct option long_options[OPTION_COUNT + 3];
    for (size_t i = 0; i < OPTION_COUNT; i++)
        long_options[i] = (struct option){options[i].name, required_argument,
                                          NULL, (int)(i + 1)};
    long_options[OPTION_COUNT] =
        (struct option){"help", no_argument, NULL, 'h'};
    long_options[OPTION_COUNT + 1] =
        (struct option){"version", no_argument, NULL, 'V'};
    long_options[OPTION_COUNT + 2] = (struct option){0};
    optind = 1;
    bool version = false;
    int c;
    while ((c = getopt_long(argc, argv, "hV", long_options, NULL)) != -1) {
        if (c == 'h') {
            print_help(stdout, argv[0]);
            return CONFIG_EXIT_OK;
        }
        if (c == 'V') {
            version = true; /* printed after every option is read */
            continue;
        }
        if (c < 1 || (size_t)c > OPTION_COUNT) {
            fprintf(stderr, "try --help\n");
            return CONFIG_EXIT_ERROR;
        }
        if (!set_option(cfg, &options[c - 1], optarg)) {
            fprintf(stderr, "invalid value for --%s: %s\n", options[c - 1].name,
                    optarg);
            return CONFIG_EXIT_ERROR;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "unexpected argument: %s (try --help)\n", argv[optind]);
        return CONFIG_EXIT_ERROR;
    }
    if (version) {
        print_version(cfg);
        return CONFIG_EXIT_OK;
    }
    if (cfg->request.max_work < 0)
        cfg->request.max_work = derived_max_work(cfg);
    return CONFIG_RUN;
}
