-- wrk script of the soak: a fixed rotation of valid, invalid and large
-- requests (bodies are built by test_soak.py and passed as files), with a
-- count of every status per thread and a separate count of 503s that carry
-- Retry-After (expected under deliberate overload) and 5xx that do not.
local threads = {}

function setup(thread)
   table.insert(threads, thread)
end

local function read_file(path)
   local f = assert(io.open(path, "rb"))
   local data = f:read("*a")
   f:close()
   return data
end

function init(args)
   local dir = args[1]
   -- weight of each kind in one rotation of 20 requests
   local kinds = {
      {"small.json", 10}, {"heads.json", 3}, {"invalid.json", 2},
      {"unknown_field.json", 1}, {"large.json", 2}, {"too_many.json", 1},
      {"overflow.json", 1},
   }
   requests = {}
   for _, k in ipairs(kinds) do
      local body = read_file(dir .. "/" .. k[1])
      local req = wrk.format("POST", "/v1/attention",
                             {["Content-Type"] = "application/json"}, body)
      for _ = 1, k[2] do table.insert(requests, req) end
   end
   nreq = 0
   statuses = {}
   retry_503 = 0
   bare_5xx = 0
   codes_503 = {}
end

function request()
   nreq = nreq + 1
   return requests[(nreq % #requests) + 1]
end

function response(status, headers, body)
   statuses[status] = (statuses[status] or 0) + 1
   if status == 503 then
      local code = string.match(body, '"code":"([^"]+)"') or "?"
      codes_503[code] = (codes_503[code] or 0) + 1
   end
   if status == 503 and headers["Retry-After"] then
      retry_503 = retry_503 + 1
   elseif status >= 500 then
      bare_5xx = bare_5xx + 1
   end
end

function done(summary, latency, requests_)
   local total = {}
   local retry, bare = 0, 0
   local codes = {}
   for _, t in ipairs(threads) do
      for code, n in pairs(t:get("codes_503")) do
         codes[code] = (codes[code] or 0) + n
      end
      for code, n in pairs(t:get("statuses")) do
         total[code] = (total[code] or 0) + n
      end
      retry = retry + t:get("retry_503")
      bare = bare + t:get("bare_5xx")
   end
   local parts = {}
   for code, n in pairs(total) do table.insert(parts, code .. "=" .. n) end
   table.sort(parts)
   io.write("SOAK statuses " .. table.concat(parts, " ") .. "\n")
   local cparts = {}
   for code, n in pairs(codes) do table.insert(cparts, code .. "=" .. n) end
   table.sort(cparts)
   io.write("SOAK codes_503 " .. table.concat(cparts, " ") .. "\n")
   io.write(string.format("SOAK retry_503 %d unexpected_5xx %d\n", retry, bare))
   io.write(string.format("SOAK requests %d errors_connect %d errors_read %d "
                          .. "errors_write %d errors_timeout %d "
                          .. "latency_p50_ms %.2f latency_p99_ms %.2f "
                          .. "latency_max_ms %.2f\n",
                          summary.requests, summary.errors.connect,
                          summary.errors.read, summary.errors.write,
                          summary.errors.timeout,
                          latency:percentile(50) / 1000,
                          latency:percentile(99) / 1000,
                          latency.max / 1000))
end
