#!/usr/bin/env python3
"""Instructions per request: skillreg beside rmcp's in-memory catalog, counted by callgrind.

Throughput on a shared machine moves with whatever else runs on it; the number of instructions a
server executes to answer one request does not. This driver starts each server under valgrind's
callgrind with instrumentation off, builds and verifies each cell's request exactly as run.py does
(same catalog, same URIs, same checks against the files on disk), sends a warm-up, then turns
instrumentation on for exactly --requests requests (keep-alive connections, each request with its
own JSON-RPC id) and off again, and divides what callgrind counted by the requests sent. What the
servers do in the background meanwhile (timers, flushing logs) is counted too, in both.

    python3 benches/e2e/instructions.py --dir /tmp/skills-1k --markdown ir.md

Needs valgrind (Debian package) beside what run.py needs. A server under callgrind answers a few
hundred requests a second, so a cell takes seconds, not minutes. Standard library only.
"""

from __future__ import annotations

import argparse
import http.client
import itertools
import json
import re
import subprocess
import sys
import threading
import time
import urllib.parse
from pathlib import Path
from typing import Any

import run  # the harness beside this file: catalog, servers, requests and their verification

DEFAULT_METHODS = "get,read_md,read_bin,dir"


def send(url: str, headers: dict, body: bytes, count: int, connections: int) -> int:
    """Send `count` requests over `connections` keep-alive connections; each gets its own id.
    Returns how many were answered with HTTP 200."""
    u = urllib.parse.urlparse(url)
    text = body.decode()
    assert '"id":1,' in text, "the request body must start its id as run.build_request writes it"
    ids = itertools.count(10**9)
    ok = [0]
    lock = threading.Lock()

    def worker(n: int) -> None:
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=300)
        for _ in range(n):
            with lock:
                rid = next(ids)
            conn.request("POST", u.path, text.replace('"id":1,', f'"id":{rid},', 1).encode(), headers)
            r = conn.getresponse()
            r.read()
            if r.status == 200:
                with lock:
                    ok[0] += 1
        conn.close()

    share = [count // connections + (1 if i < count % connections else 0) for i in range(connections)]
    threads = [threading.Thread(target=worker, args=(n,)) for n in share]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return ok[0]


def callgrind(pid: int, *what: str) -> None:
    subprocess.run(["callgrind_control", *what, str(pid)], check=True, capture_output=True)


def instructions(dump: Path) -> int:
    """Instructions in a callgrind dump: the sum of every function's own count (the dump's own
    total is not kept consistent when counters are zeroed while threads run)."""
    out = subprocess.run(["callgrind_annotate", "--threshold=100", str(dump)],
                         capture_output=True, text=True, check=True).stdout
    total = 0
    for line in out.splitlines():
        m = re.match(r"\s*([\d,]+) \(\s*[\d.]+%\)\s+\S", line)
        if m and "PROGRAM TOTALS" not in line:
            total += int(m.group(1).replace(",", ""))
    return total


def measure_server(name: str, args, cat: run.Catalog, work: Path, tenv: dict, results: dict) -> None:
    rec: dict[str, Any] = {"cells": {}}
    results["servers"][name] = rec
    port = run.free_port()
    server, info = run.make_server(name, args, cat, port, work, tenv)
    rec.update(info)
    prefix = f"{work}/cg-{name}"
    for old in work.glob(f"cg-{name}.*"):
        old.unlink()
    server.argv = ["valgrind", "--tool=callgrind", "--instr-atstart=no",
                   f"--callgrind-out-file={prefix}.%p.out", *server.argv]
    url = server.start(port, timeout=900)
    pid = server.proc.pid
    print(f"[{name}] ready under callgrind at {url} in {server.startup_s:.0f} s", file=sys.stderr, flush=True)
    try:
        for era in args.eras:
            session = None
            if era == run.LEGACY:
                session, _ = run.open_legacy_session(url)
            for key, method, params, verify in run.plan(name, cat, url, era, session, set(args.methods)):
                only = next(o for k, _, o in run.METHODS if k == key)
                if only is not None and name not in only:
                    continue
                cell: dict[str, Any] = {"method": method}
                rec["cells"][f"{key}|{era}"] = cell
                try:
                    result, headers, body = run.call(url, era, method, params, session)
                    cell["verified"] = verify(result)
                except Exception as e:  # noqa: BLE001
                    cell.update(status="n/a", reason=str(e)[:300])
                    print(f"[{name}] {key} {era}: n/a: {cell['reason']}", file=sys.stderr, flush=True)
                    continue
                send(url, headers, body, args.warmup, args.connections)
                # Work the server started on its own (a new catalog's background fill) is over.
                run.wait_idle(server)
                callgrind(pid, "--instr=on")
                callgrind(pid, "--zero")
                t0 = time.monotonic()
                answered = send(url, headers, body, args.requests, args.connections)
                seconds = time.monotonic() - t0
                callgrind(pid, "--instr=off")
                label = f"{key}-{era}"
                callgrind(pid, f"--dump={label}")
                dumps = sorted(work.glob(f"cg-{name}.{pid}.out.*"), key=lambda p: p.stat().st_mtime)
                ir = instructions(dumps[-1])
                result2, _, _ = run.call(url, era, method, params, session)
                verify(result2)
                cell.update(status="ok", requests=args.requests, answered=answered, instructions=ir,
                            per_request=round(ir / args.requests), seconds=round(seconds, 1))
                print(f"[{name}] {key:9s} {era}: {ir / args.requests:10,.0f} instructions/request "
                      f"({answered}/{args.requests} answered 200)", file=sys.stderr, flush=True)
    finally:
        server.stop()


def markdown(results: dict) -> str:
    servers = results["config"]["servers"]
    peers = [s for s in servers if s not in ("skillreg", "skillreg-stateless")]
    lines = [
        f"Instructions per request (callgrind), {results['config']['requests']} requests per cell "
        f"over {results['config']['connections']} keep-alive connections, after "
        f"{results['config']['warmup']} warm-up requests; {results['started']}.",
        "",
        "| method | era | " + " | ".join(f"{s} instr/req" for s in servers)
        + "".join(f" | {p}/skillreg" for p in peers) + " |",
        "|---|---|" + "--:|" * (len(servers) + len(peers)),
    ]
    for key, label, _ in run.METHODS:
        if key not in results["config"]["methods"]:
            continue
        for era in results["config"]["eras"]:
            cells = {s: results["servers"].get(s, {}).get("cells", {}).get(f"{key}|{era}") for s in servers}
            if all(c is None for c in cells.values()):
                continue
            row = [label, era]
            for s in servers:
                c = cells[s]
                row.append(f"{c['per_request']:,}" if c and c.get("status") == "ok" else "–")
            for p in peers:
                # A stateless peer beside skillreg's stateless mode, when both are measured.
                mine = cells.get("skillreg-stateless" if p == "rmcp-stateless"
                                 and "skillreg-stateless" in servers else "skillreg")
                other = cells.get(p)
                if mine and other and mine.get("status") == "ok" and other.get("status") == "ok":
                    row.append(f"{other['per_request'] / mine['per_request']:.2f}×")
                else:
                    row.append("–")
            lines.append("| " + " | ".join(row) + " |")
    lines += ["", "A ratio above 1 means skillreg executes fewer instructions per request than the peer."]
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", required=True, help="flat directory of skills, as for run.py")
    ap.add_argument("--servers", default="skillreg,rmcp")
    ap.add_argument("--eras", default=",".join(run.ERAS))
    ap.add_argument("--methods", default=DEFAULT_METHODS,
                    help="subset of: " + ",".join(k for k, _, _ in run.METHODS))
    ap.add_argument("--requests", type=int, default=2000, help="counted requests per cell")
    ap.add_argument("--warmup", type=int, default=300, help="uncounted requests before each cell")
    ap.add_argument("--connections", type=int, default=4)
    ap.add_argument("--work", default="/tmp/skillreg-instructions")
    ap.add_argument("--out", default="instructions.json")
    ap.add_argument("--markdown", help="the report as Markdown (default: --out with .md)")
    ap.add_argument("--skillreg-bin", default=str(run.REPO / "target/release/skillreg"))
    ap.add_argument("--rmcp-bin", default=str(Path.home() / ".cache/skillreg/peers-target/release/rmcp-catalog"))
    args = ap.parse_args()
    args.servers = [s for s in args.servers.split(",") if s]
    args.eras = [e for e in args.eras.split(",") if e]
    args.methods = [m for m in args.methods.split(",") if m]
    # What run.make_server reads of its arguments.
    args.skillreg_data = None
    args.database_url = None
    args.node = args.python = None
    args.page_size = 100
    for s in args.servers:
        if s not in ("skillreg", "rmcp", "skillreg-stateless", "rmcp-stateless"):
            ap.error(f"{s}: only skillreg, rmcp and their stateless modes run under callgrind here")
    for tool in ("valgrind", "callgrind_control", "callgrind_annotate"):
        if subprocess.run(["which", tool], capture_output=True).returncode != 0:
            ap.error(f"{tool} not found: apt-get install valgrind")

    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    cat = run.Catalog(Path(args.dir))
    results: dict[str, Any] = {
        "started": time.strftime("%Y-%m-%d %H:%M:%S"),
        "config": {k: getattr(args, k) for k in ("servers", "eras", "methods", "requests", "warmup",
                                                 "connections")},
        "catalog": {"dir": str(cat.root), "skills": len(cat.skills), "skill": cat.skill},
        "servers": {},
    }
    for name in args.servers:
        measure_server(name, args, cat, work, run.tools_env(), results)
        Path(args.out).write_text(json.dumps(results, indent=2) + "\n")
    md = markdown(results)
    Path(args.markdown or Path(args.out).with_suffix(".md")).write_text(md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
