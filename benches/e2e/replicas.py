#!/usr/bin/env python3
"""Read throughput of one skillreg replica vs two, on one PostgreSQL database, behind the
HAProxy of deploy/replicas (its haproxy.cfg with the addresses rewritten to loopback), and of a
single replica reached directly, with wrk and benches/e2e/post.lua. Also reports each replica
process's CPU seconds per 1,000 requests: the per-request cost the scaling model in
BENCHMARKS.md rests on.

    python3 benches/e2e/replicas.py --database-url postgres://…/bench1k \\
        --skillreg target/release/skillreg --uri skill://bench/<name>/SKILL.md

The database must hold the catalog already (`skillreg import --database-url …`). Every
request is a 2026-07-28 `skills/get` of --uri (stateless, so any replica may answer it), sent
once and checked before the load. Standard library, wrk and haproxy.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"},
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(url: str, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.1)
    sys.exit(f"{url} not ready")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def request(uri: str) -> tuple[dict, bytes]:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "skills/get",
                       "params": {"uri": uri, "_meta": META}}).encode()
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
               "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "skills/get"}
    return headers, body


def check(url: str, uri: str) -> None:
    headers, body = request(uri)
    with urllib.request.urlopen(urllib.request.Request(url, body, headers), timeout=10) as r:
        answer = json.loads(r.read())
    if answer.get("result", {}).get("skill", {}).get("uri") != uri:
        sys.exit(f"unexpected answer from {url}: {str(answer)[:300]}")


def wrk(args, url: str, uri: str, work: Path) -> dict:
    headers, body = request(uri)
    req = work / "request.txt"
    req.write_bytes("".join(f"{k}: {v}\n" for k, v in headers.items()).encode() + b"\n" + body)
    env = dict(os.environ, BENCH_REQUEST=str(req), BENCH_ID_BASE="1000000")
    out = subprocess.run(
        [args.wrk, "-t1", f"-c{args.connections}", f"-d{args.duration}s", "-s", str(HERE / "post.lua"), url],
        capture_output=True, text=True, env=env, check=True,
    ).stdout
    m = re.search(r"^BENCH_RESULT (\{.*\})$", out, re.M)
    if not m:
        sys.exit(f"no BENCH_RESULT from wrk: {out[-500:]}")
    result = json.loads(m.group(1))
    if result["non2xx"] or result["timeouts"]:
        sys.exit(f"errors under load: {result}")
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--database-url", required=True)
    ap.add_argument("--uri", required=True, help="a current skill's SKILL.md URI")
    ap.add_argument("--skillreg", default=str(REPO / "target/release/skillreg"))
    ap.add_argument("--haproxy", default=shutil.which("haproxy") or "/usr/sbin/haproxy")
    ap.add_argument("--wrk", default=shutil.which("wrk") or "wrk")
    ap.add_argument("--duration", type=int, default=8)
    ap.add_argument("--connections", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=2, help="alternating rounds of each setup")
    args = ap.parse_args()

    work = Path(tempfile.mkdtemp(prefix="skillreg-replicas-"))
    procs: list[subprocess.Popen] = []
    try:
        env = {**os.environ, "SKILLREG_DATABASE_URL": args.database_url, "SKILLREG_LOG": "warn"}
        replicas = []
        for i in (1, 2):
            port = free_port()
            proc = subprocess.Popen(
                [args.skillreg, "serve", "--no-seed", "--data-dir", str(work / f"replica-{i}"),
                 "--listen", f"127.0.0.1:{port}"],
                env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )
            procs.append(proc)
            wait_ready(f"http://127.0.0.1:{port}/readyz")
            replicas.append((proc, port))
        shipped = (REPO / "deploy/replicas/haproxy.cfg").read_text()
        proxies = {}
        for setup, members in (("HAProxy, 1 replica", replicas[:1]), ("HAProxy, 2 replicas", replicas)):
            port = free_port()
            config = shipped.replace("bind :8080", f"bind 127.0.0.1:{port}")
            for i in (1, 2):
                line = f"server skillreg-{i} skillreg-{i}:8080"
                if i <= len(members):
                    config = config.replace(line, f"server skillreg-{i} 127.0.0.1:{members[i - 1][1]}")
                else:
                    config = config.replace(line, "")
            path = work / f"haproxy-{len(members)}.cfg"
            path.write_text(config)
            procs.append(subprocess.Popen([args.haproxy, "-db", "-f", str(path)],
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            wait_ready(f"http://127.0.0.1:{port}/readyz")
            proxies[setup] = f"http://127.0.0.1:{port}/mcp"
        setups = {"1 replica, direct": f"http://127.0.0.1:{replicas[0][1]}/mcp", **proxies}
        for url in setups.values():
            check(url, args.uri)
        results: dict[str, list[float]] = {name: [] for name in setups}
        cpu: dict[str, list[float]] = {name: [] for name in setups}
        for _ in range(args.rounds):
            for name, url in setups.items():
                before = sum(cpu_seconds(p.pid) for p, _ in replicas)
                r = wrk(args, url, args.uri, work)
                spent = sum(cpu_seconds(p.pid) for p, _ in replicas) - before
                results[name].append(r["rps"])
                cpu[name].append(1000 * spent / max(r["requests"], 1))
                print(f"{name}: {r['rps']:.0f} req/s, p50 {r['p50_us'] / 1000:.2f} ms, "
                      f"p99 {r['p99_us'] / 1000:.2f} ms, replica CPU {cpu[name][-1]:.3f} s per 1,000",
                      flush=True)
        print()
        print("| setup | req/s (median of rounds) | replica CPU s per 1,000 requests |")
        print("| --- | --: | --: |")
        for name in setups:
            rps = sorted(results[name])[len(results[name]) // 2]
            per = sorted(cpu[name])[len(cpu[name]) // 2]
            print(f"| {name} | {rps:.0f} | {per:.3f} |")
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
