-- wrk script: POST the file named by $BENCH_BODY to $BENCH_PATH, and print
-- one JSON line of results that run_bench.py reads (latencies in µs).
local f = assert(io.open(os.getenv("BENCH_BODY"), "rb"))
wrk.method = "POST"
wrk.path = os.getenv("BENCH_PATH") or "/v1/attention"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/json"

function done(summary, latency, requests)
   local e = summary.errors
   io.write(string.format(
      '{"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,' ..
      '"mean_us":%.1f,"connect_errors":%d,"read_errors":%d,' ..
      '"write_errors":%d,"status_errors":%d,"timeouts":%d}\n',
      summary.requests, summary.duration, latency:percentile(50),
      latency:percentile(99), latency.mean, e.connect, e.read, e.write,
      e.status, e.timeout))
end
