-- wrk script for the end-to-end harness: POST one fixed JSON-RPC body with fixed headers, and
-- print one machine-readable JSON line at the end.
--
--   BENCH_REQUEST=req.txt wrk -t1 -c16 -d8s --latency -s benches/e2e/post.lua http://127.0.0.1:PORT/mcp
--
-- BENCH_REQUEST names a file: header lines "Name: value", one empty line, then the body
-- (taken byte for byte to the end of the file). Written by run.py.
--
-- Every request gets its own JSON-RPC id: the body's first `"id":1,` is replaced by a counter
-- that starts above BENCH_ID_BASE (default 1000000; run.py passes a fresh base to every wrk
-- run). A fixed id breaks 2025-11-25 sessions: a server routes a response by session and id,
-- so 16 concurrent requests with one id in one session leave 15 connections waiting forever
-- (and wrk counts nothing for a request that never completes).
--
-- done() prints, on its own line:
--   BENCH_RESULT {"requests":N,"duration_us":N,"rps":F,"bytes":N,"p50_us":N,"p90_us":N,
--                 "p99_us":N,"mean_us":F,"max_us":N,"non2xx":N,"connect_errors":N,
--                 "read_errors":N,"write_errors":N,"timeouts":N}
-- "non2xx" is wrk's errors.status: responses with an HTTP status above 399 (JSON-RPC errors
-- arrive with status 200, which is why run.py verifies every request once before loading it).

local path = os.getenv("BENCH_REQUEST")
if not path then
    io.stderr:write("post.lua: set BENCH_REQUEST to the request file\n")
    os.exit(2)
end
local f = assert(io.open(path, "rb"))
local raw = f:read("*a")
f:close()

local split = raw:find("\n\n", 1, true)
assert(split, "post.lua: the request file needs an empty line between headers and body")
local head, body = raw:sub(1, split - 1), raw:sub(split + 2)

wrk.method = "POST"
wrk.body = body
wrk.headers = {}
for line in head:gmatch("[^\n]+") do
    local name, value = line:match("^([^:]+):%s*(.*)$")
    if name then wrk.headers[name] = value end
end

local id_at, id_end = body:find('"id":1,', 1, true)
local body_head = id_at and body:sub(1, id_at + 4) or nil  -- up to and including `"id":`
local body_tail = id_at and body:sub(id_end) or nil        -- from the `,` on
local id_base = tonumber(os.getenv("BENCH_ID_BASE") or "1000000")
local threads = 0

function setup(thread)
    thread:set("thread_index", threads)
    threads = threads + 1
end

local sent = 0
if body_head then
    function request()
        sent = sent + 1
        local id = id_base + (thread_index or 0) * 100000000 + sent
        return wrk.format(nil, nil, nil, body_head .. string.format("%d", id) .. body_tail)
    end
end

function done(summary, latency, requests)
    local e = summary.errors
    local secs = summary.duration / 1e6
    io.write(string.format(
        'BENCH_RESULT {"requests":%d,"duration_us":%d,"rps":%.2f,"bytes":%d,' ..
        '"p50_us":%d,"p90_us":%d,"p99_us":%d,"mean_us":%.1f,"max_us":%d,' ..
        '"non2xx":%d,"connect_errors":%d,"read_errors":%d,"write_errors":%d,"timeouts":%d}\n',
        summary.requests, summary.duration, summary.requests / secs, summary.bytes,
        latency:percentile(50), latency:percentile(90), latency:percentile(99),
        latency.mean, latency.max,
        e.status, e.connect, e.read, e.write, e.timeout))
end
