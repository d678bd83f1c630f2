/*
 * process_metrics.h - the process's own metrics, named as Prometheus's
 * client libraries name them (process_cpu_seconds_total,
 * process_resident_memory_bytes, process_virtual_memory_bytes,
 * process_open_fds, process_max_fds, process_start_time_seconds), so that
 * the dashboards and alerts written for them work unchanged.
 */
#ifndef SERVER_PROCESS_METRICS_H
#define SERVER_PROCESS_METRICS_H

#include "server/base/buf.h"

/* Appends the process_* series, read from /proc now (Linux). */
void process_metrics_render(buf *out);

#endif
