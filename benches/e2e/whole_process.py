#!/usr/bin/env python3
"""Whole-process figures for one skillreg data directory: cold start, peak RSS while serving,
and storage (deduplication) — the numbers of BENCHMARKS.md's "whole process" table.

    python3 benches/e2e/whole_process.py --skillreg target/release/skillreg --data-dir /tmp/b1m

The catalog must come from `skillreg-bench generate` (the request targets are synthetic skill
names, computed by `skillreg-bench names`). Standard library only.

Cold start: time from spawning `skillreg serve` to the first answered skills/list request (polled
every 5 ms), over --runs runs (the first run may read a cold page cache; the median is reported).
Serving RSS: VmHWM of the server after --requests MCP requests spread across the catalog
(skills/get, resources/read of SKILL.md and of a 200 KB binary, completion, search, deep
skills/list pages), on one keep-alive connection.
Storage: bytes as published (sum of every version's file sizes), unique blob bytes, and the
database and search index on disk.

Memory against the cache budget (`--budgets 16,64,256,384`), instead of the figures above: for
each budget, a server started with `--cache-memory-mib` that budget, then a load that fills every
cache from the first --fill skills in listing order (all of them by default): every page of
`skills/list` to there, and for each skill `skills/get`, `resources/read` of each of its files
and a completion over MCP (2026-07-28 era), its web page, and its agent-skills discovery index
(which packs its archive). Then, after --settle seconds idle: RSS (VmRSS, and its anonymous and
file-backed parts: the search index is mmapped), peak RSS (VmHWM) and the bytes the caches report
in /metrics (`skillreg_cache_bytes`; "caches full": those that evicted), as a table with RSS −
budget and RSS − held. A 1M catalog needs about 80,000 skills (`--fill 80000`) to fill 384 MiB.
Serve a newly generated catalog once before: its first server serializes every skills/list entry
in the background (76 s at 1M), which would be measured too.
"""

import argparse
import base64
import http.client
import json
import os
import random
import socket
import sqlite3
import statistics
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "whole-process", "version": "0"},
}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def call(conn, method, params, name=None):
    params = dict(params, _meta=META)
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": method,
    }
    if name is not None:
        headers["Mcp-Name"] = name
    conn.request("POST", "/mcp", body=body, headers=headers)
    resp = conn.getresponse()
    text = resp.read().decode()
    if resp.status != 200:
        raise RuntimeError(f"{method}: HTTP {resp.status}: {text[:200]}")
    if text.startswith("event:") or text.startswith("data:") or "\ndata:" in text:
        text = next(l[5:] for l in text.splitlines() if l.startswith("data:") and l[5:].strip())
    answer = json.loads(text)
    if "error" in answer:
        raise RuntimeError(f"{method}: {answer['error']}")
    return answer["result"]


def vm(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    return 0


def start(binary, data_dir, port):
    return subprocess.Popen(
        [binary, "serve", "--data-dir", data_dir, "--listen", f"127.0.0.1:{port}", "--no-seed",
         "--log-format", "json"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )


def cold_start(binary, data_dir):
    port = free_port()
    began = time.perf_counter()
    proc = start(binary, data_dir, port)
    try:
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"server exited with {proc.returncode}")
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                result = call(conn, "skills/list", {})
                elapsed = time.perf_counter() - began
                assert result["skills"], "the first page lists skills"
                return elapsed, proc, port
            except (ConnectionError, OSError):
                time.sleep(0.005)
    except BaseException:
        proc.kill()
        raise


def names(binary, picks):
    """(number, namespace, name) of synthetic skills, from `skillreg-bench names` (the binary
    built beside `skillreg`)."""
    bench = os.path.join(os.path.dirname(binary), "skillreg-bench")
    out = subprocess.run(
        [bench, "names", *map(str, picks)], check=True, capture_output=True, text=True
    ).stdout.split()
    return [(i, out[2 * k], out[2 * k + 1]) for k, i in enumerate(picks)]


KINDS = ["skills/get", "resources/read SKILL.md", "resources/read 200 KB binary",
         "completion/complete", "tools/call search_skills", "skills/list (deep page)"]


def serve_load(conn, targets, binaries, requests):
    """Send `requests` requests spread over `targets`, one at a time; every answer is checked
    for content. Returns each kind's latencies in seconds (client-measured, HTTP included)."""
    latencies = {k: [] for k in KINDS}
    for n in range(requests):
        i, ns, name = targets[n % len(targets)]
        root = f"skill://{ns}/{name}"
        kind = n % 6
        began = time.perf_counter()
        one_request(conn, kind, i, ns, name, root, binaries, n)
        latencies[KINDS[kind]].append(time.perf_counter() - began)
    return latencies


def one_request(conn, kind, i, ns, name, root, binaries, n):
        if kind == 0:
            r = call(conn, "skills/get", {"uri": f"{root}/SKILL.md"})
            assert r["skill"]["frontmatter"]["name"] == name, r
        elif kind == 1:
            r = call(conn, "resources/read", {"uri": f"{root}/SKILL.md"}, f"{root}/SKILL.md")
            assert f"name: {name}" in r["contents"][0]["text"]
        elif kind == 2:
            b, bns, bname = binaries[n % len(binaries)]
            uri = f"skill://{bns}/{bname}/assets/figure-{(b // 20) % 8}.png"
            r = call(conn, "resources/read", {"uri": uri}, uri)
            assert len(r["contents"][0]["blob"]) > 200_000, uri
        elif kind == 3:
            r = call(conn, "completion/complete", {
                "ref": {"type": "ref/resource", "uri": "skill://{namespace}/{name}/SKILL.md"},
                "argument": {"name": "name", "value": name[:3]},
                "context": {"arguments": {"namespace": ns}},
            })
            assert r["completion"]["values"], r
        elif kind == 4:
            r = call(conn, "tools/call", {"name": "search_skills",
                                          "arguments": {"query": name.replace("-", " "), "limit": 5}},
                     "search_skills")
            assert not r.get("isError"), r
        else:
            cursor = base64.urlsafe_b64encode(f"{root}/SKILL.md".encode()).decode().rstrip("=")
            r = call(conn, "skills/list", {"cursor": cursor})
            assert "skills" in r, r


def status(pid):
    """The server's memory figures from /proc/<pid>/status, in bytes."""
    return {k: vm(pid, k) for k in ("VmRSS", "VmHWM", "RssAnon", "RssFile")}


def caches(port):
    """Each cache's bytes held, capacity and evictions, from /metrics."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("GET", "/metrics")
    text = conn.getresponse().read().decode()
    conn.close()
    series = {"held": "skillreg_cache_bytes{", "capacity": "skillreg_cache_capacity_bytes{",
              "evictions": "skillreg_cache_evictions_total{"}
    found = {k: {} for k in series}
    for line in text.splitlines():
        for key, prefix in series.items():
            if line.startswith(prefix):
                name = line.split('cache="')[1].split('"')[0]
                found[key][name] = int(float(line.rsplit(" ", 1)[1]))
    return found


def get(conn, path):
    conn.request("GET", path)
    resp = conn.getresponse()
    body = resp.read()
    if resp.status != 200:
        raise RuntimeError(f"GET {path}: HTTP {resp.status}: {body[:200]}")
    return body


def fill_one(conn, skill):
    """Every request of the fill load for one listed skill; returns the files read."""
    uri = skill["uri"]
    ns, name = uri[len("skill://"):].split("/")[:2]
    got = call(conn, "skills/get", {"uri": uri})
    assert got["skill"]["frontmatter"]["name"] == name, got
    resources = got["skill"]["resources"]
    files = [f["uri"] for f in (resources.get("files", []) if isinstance(resources, dict) else resources)]
    assert uri in files, files
    for file in files:
        r = call(conn, "resources/read", {"uri": file}, file)
        assert r["contents"][0].get("text") is not None or r["contents"][0].get("blob"), file
    r = call(conn, "completion/complete", {
        "ref": {"type": "ref/resource", "uri": "skill://{namespace}/{name}/SKILL.md"},
        "argument": {"name": "name", "value": name[:4]},
        "context": {"arguments": {"namespace": ns}},
    })
    assert all(v.startswith(name[:4]) for v in r["completion"]["values"]), r
    get(conn, f"/skills/{ns}/{name}")
    get(conn, f"/s/{ns}/{name}/.well-known/agent-skills/index.json")
    return len(files)


def fill(port, limit, connections):
    """List the first `limit` skills page by page, each page's skills filled by `connections`
    clients at once. Returns (skills, files read, seconds)."""
    local = threading.local()

    def one(skill):
        if not hasattr(local, "conn"):
            local.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        return fill_one(local.conn, skill)

    lister = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    began = time.perf_counter()
    skills = files = 0
    cursor = None
    with ThreadPoolExecutor(connections) as pool:
        while skills < limit:
            page = call(lister, "skills/list", {"cursor": cursor} if cursor else {})
            batch = page["skills"][: limit - skills]
            files += sum(pool.map(one, batch))
            skills += len(batch)
            cursor = page.get("nextCursor")
            if not cursor:
                break
    return skills, files, time.perf_counter() - began


def memory(args):
    """RSS against the cache budget, one server per budget."""
    rows = []
    for mib in args.budgets:
        port = free_port()
        proc = subprocess.Popen(
            [args.skillreg, "serve", "--data-dir", args.data_dir, "--listen", f"127.0.0.1:{port}",
             "--no-seed", "--log-format", "json", "--cache-memory-mib", str(mib)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 120
            while True:
                if proc.poll() is not None:
                    raise RuntimeError(f"server exited with {proc.returncode}")
                try:
                    call(http.client.HTTPConnection("127.0.0.1", port, timeout=30), "skills/list", {})
                    break
                except (ConnectionError, OSError):
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)
            idle = status(proc.pid)
            skills, files, seconds = fill(port, args.fill, args.connections)
            time.sleep(args.settle)
            after = status(proc.pid)
            found = caches(port)
        finally:
            proc.terminate()
            proc.wait()
        row = {"budget_mib": mib, "skills": skills, "files_read": files, "fill_s": seconds,
               "idle": idle, "after": after, "cache_bytes": found["held"],
               "cache_bytes_total": sum(found["held"].values()),
               "caches_evicting": sorted(k for k, v in found["evictions"].items() if v)}
        rows.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    mib = lambda b: f"{b / 2**20:.0f}"
    print(f"{args.data_dir}: the first {rows[0]['skills']} skills in listing order, "
          f"{rows[0]['files_read']} files read; MiB")
    print("| budget | caches hold | caches full | RSS idle | RSS after | anon / file | peak RSS "
          "| RSS − budget | RSS − held |")
    print("| --: | --: | --: | --: | --: | --: | --: | --: | --: |")
    for r in rows:
        a = r["after"]
        print(f"| {r['budget_mib']} | {mib(r['cache_bytes_total'])} | "
              f"{len(r['caches_evicting'])} of {len(r['cache_bytes'])} | {mib(r['idle']['VmRSS'])} | "
              f"{mib(a['VmRSS'])} | {mib(a['RssAnon'])} / {mib(a['RssFile'])} | {mib(a['VmHWM'])} | "
              f"{mib(a['VmRSS'] - r['budget_mib'] * 2**20)} | "
              f"{mib(a['VmRSS'] - r['cache_bytes_total'])} |")


def percentiles(samples):
    ordered = sorted(samples)
    at = lambda q: ordered[min(len(ordered) - 1, round((len(ordered) - 1) * q))] * 1000
    return {"n": len(ordered), "p50": at(0.5), "p99": at(0.99)}


def du(path):
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            total += os.path.getsize(os.path.join(root, f))
    return total


def storage(data_dir):
    db = sqlite3.connect(f"file:{os.path.join(data_dir, 'skillreg.db')}?mode=ro", uri=True)
    published, files = db.execute("SELECT coalesce(sum(size), 0), count(*) FROM version_files").fetchone()
    unique, blobs = db.execute("SELECT coalesce(sum(size), 0), count(*) FROM blobs").fetchone()
    skills = db.execute("SELECT count(*) FROM skills").fetchone()[0]
    db.close()
    db_bytes = sum(os.path.getsize(os.path.join(data_dir, f)) for f in os.listdir(data_dir)
                   if f.startswith("skillreg.db"))
    index_bytes = du(os.path.join(data_dir, "search-index"))
    return {
        "skills": skills, "files": files, "blobs": blobs,
        "published_bytes": published, "unique_blob_bytes": unique,
        "dedup_ratio": published / unique if unique else None,
        "db_bytes": db_bytes, "index_bytes": index_bytes,
        "disk_over_published": (db_bytes + index_bytes) / published if published else None,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--skillreg", default="target/release/skillreg")
    ap.add_argument("--data-dir", required=True)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--requests", type=int, default=6000)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--budgets", type=lambda v: [int(b) for b in v.split(",")],
                    help="measure RSS against these cache budgets (MiB) instead")
    ap.add_argument("--fill", type=int, default=10**9,
                    help="with --budgets: fill from this many skills (in listing order)")
    ap.add_argument("--connections", type=int, default=4, help="with --budgets: clients at once")
    ap.add_argument("--settle", type=float, default=2.0, help="with --budgets: idle before sampling")
    args = ap.parse_args()
    if args.budgets:
        return memory(args)
    rng = random.Random(7)

    store = storage(args.data_dir)
    starts = []
    for run in range(args.runs):
        elapsed, proc, port = cold_start(args.skillreg, args.data_dir)
        starts.append(elapsed)
        if run < args.runs - 1:
            proc.terminate()
            proc.wait()
    # The last server stays up for the serving load.
    try:
        idle_rss = vm(proc.pid, "VmRSS")
        n = store["skills"]
        targets = names(args.skillreg, [rng.randrange(n) for _ in range(400)])
        binaries = names(args.skillreg, [rng.randrange(max(n // 20, 1)) * 20 for _ in range(50)])
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        began = time.perf_counter()
        latencies = serve_load(conn, targets, binaries, args.requests)
        load_seconds = time.perf_counter() - began
        peak = vm(proc.pid, "VmHWM")
        rss = vm(proc.pid, "VmRSS")
    finally:
        proc.terminate()
        proc.wait()
    result = {
        "data_dir": args.data_dir,
        "cold_start_s": {"first": starts[0], "median": statistics.median(starts), "all": starts},
        "rss_bytes": {"idle_after_start": idle_rss, "after_load": rss, "peak": peak},
        "load": {"requests": args.requests, "seconds": load_seconds},
        "latency_ms": {k: percentiles(v) for k, v in latencies.items()},
        "storage": store,
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return
    mb = lambda b: f"{b / 1e6:.1f} MB"
    print(f"catalog: {store['skills']} skills, {store['files']} files, {store['blobs']} blobs")
    print(f"cold start to first answered skills/list: median {result['cold_start_s']['median'] * 1000:.0f} ms "
          f"(first {starts[0] * 1000:.0f} ms, {args.runs} runs)")
    print(f"RSS: {mb(idle_rss)} after start, peak {mb(peak)} after {args.requests} requests "
          f"({load_seconds:.1f} s)")
    print("sequential requests over HTTP (2026-07-28, one connection), ms:")
    for kind, p in result["latency_ms"].items():
        print(f"  {kind}: p50 {p['p50']:.2f}, p99 {p['p99']:.2f} ({p['n']} requests)")
    print(f"storage: {mb(store['published_bytes'])} published, {mb(store['unique_blob_bytes'])} unique blobs "
          f"(dedup {store['dedup_ratio']:.1f}x); on disk {mb(store['db_bytes'])} database + "
          f"{mb(store['index_bytes'])} search index = {store['disk_over_published']:.2f}x the published bytes")


if __name__ == "__main__":
    sys.exit(main())
