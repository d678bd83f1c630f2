/*
 * process_metrics.c - process_* series from /proc/self (process_metrics.h).
 *
 * DESIGN
 * Read at each scrape, as Prometheus's own clients do: CPU time from
 * getrusage(), memory from /proc/self/statm, descriptors by listing
 * /proc/self/fd, the start time from /proc/self/stat's start (clock ticks
 * after boot) and /proc/stat's boot time.  A value that cannot be read is
 * left out rather than reported as 0.
 */
#include "server/obs/process_metrics.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* The process's start, seconds since the epoch, or a negative number. */
static double start_time(void)
{
    char text[1024];
    FILE *f = fopen("/proc/self/stat", "r");
    size_t len = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f)
        fclose(f);
    text[len] = '\0';
    /* after the command's closing parenthesis: field 3 on; start is 22 */
    const char *at = strrchr(text, ')');
    unsigned long long ticks = 0, boot = 0;
    if (!at || sscanf(at + 2,
                      "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u "
                      "%*d %*d %*d %*d %*d %*d %llu",
                      &ticks) != 1)
        return -1;
    f = fopen("/proc/stat", "r");
    char line[256];
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "btime %llu", &boot) == 1)
            break;
    if (f)
        fclose(f);
    long hz = sysconf(_SC_CLK_TCK);
    return boot && hz > 0 ? (double)boot + (double)ticks / (double)hz : -1;
}

static long open_fds(void)
{
    DIR *dir = opendir("/proc/self/fd");
    if (!dir)
        return -1;
    long count = 0;
    for (struct dirent *e; (e = readdir(dir));)
        count += e->d_name[0] != '.';
    closedir(dir);
    return count - 1; /* the listing's own descriptor */
}

static void series(buf *out, const char *name, const char *type,
                   const char *help, double value)
{
    buf_printf(out, "# HELP %s %s\n# TYPE %s %s\n%s %.15g\n", name, help, name,
               type, name, value);
}

void process_metrics_render(buf *out)
{
    struct rusage usage;
    if (getrusage(RUSAGE_SELF, &usage) == 0)
        series(out, "process_cpu_seconds_total", "counter",
               "Total user and system CPU time spent in seconds.",
               (double)usage.ru_utime.tv_sec + usage.ru_utime.tv_usec * 1e-6 +
                   (double)usage.ru_stime.tv_sec +
                   usage.ru_stime.tv_usec * 1e-6);
    unsigned long long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    long page = sysconf(_SC_PAGESIZE);
    if (f && fscanf(f, "%llu %llu", &pages, &resident) == 2 && page > 0) {
        series(out, "process_virtual_memory_bytes", "gauge",
               "Virtual memory size in bytes.", (double)pages * (double)page);
        series(out, "process_resident_memory_bytes", "gauge",
               "Resident memory size in bytes.",
               (double)resident * (double)page);
    }
    if (f)
        fclose(f);
    long fds = open_fds();
    if (fds >= 0)
        series(out, "process_open_fds", "gauge",
               "Number of open file descriptors.", (double)fds);
    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0)
        series(out, "process_max_fds", "gauge",
               "Maximum number of open file descriptors.",
               (double)limit.rlim_cur);
    double start = start_time();
    if (start > 0)
        series(out, "process_start_time_seconds", "gauge",
               "Start time of the process since unix epoch in seconds.", start);
}
