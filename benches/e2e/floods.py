#!/usr/bin/env python3
"""The anonymous floods of the security review, replayed against a release binary: what the
server holds after each, and how /healthz answers under heavy downloads. The numbers of
RELIABILITY.md's "Bounded resources" section.

    python3 benches/e2e/floods.py --skillreg target/release/skillreg

Each probe starts its own server on a fresh data directory (default settings unless the probe
says otherwise), so one probe's leftovers never count in another's figures. Standard library
only. Probes:

  metrics   2,000 requests with 8,000-byte invented method names, then one /metrics scrape:
            its size and the server's RSS.
  sessions  10,000 anonymous `initialize` POSTs (8 threads, keep-alive): how many were
            accepted, how many answered 503, and RSS. Run twice: with the defaults (one
            client address, so the per-client cap applies) and with the per-client cap lifted
            (so the global cap applies).
  halfopen  3,000 connections that send half a request header: the server's open descriptors
            while they wait, and after the header-read timeout; /healthz from 127.0.0.7.
  logs      10 `initialize` requests with a 3 MB clientInfo.name: bytes written to stderr.
  heavy     32 downloads (16 at a time) of a 16 x 1 MiB archive, then 16 concurrent renders of
            a 12 MB SKILL.md, while /healthz is probed: its median and worst latency, against
            its idle median.
  connflood 1,100 half-header connections from 127.0.0.1, each reopened as soon as the server
            closes it, for 15 s, while a victim at 127.0.0.7 polls /healthz: its latency.
  bodyhold100, bodyhold1000
            100 or 1,000 anonymous POST /mcp declaring 4 MiB, each sending all but 200 bytes
            and holding (50 connections per source address 127.0.x.y): the server's RSS.
  bodyhold_small
            the same with 1,000 bodies of 255 KiB (under the anonymous cap): what the body
            budget holds.
"""

import argparse
import concurrent.futures
import http.client
import json
import os
import random
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ADMIN = secrets.token_hex(32)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def fds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


class Server:
    def __init__(self, binary, extra=(), data_dir=None, stderr=subprocess.DEVNULL):
        self.tmp = tempfile.TemporaryDirectory(prefix="skillreg-flood-")
        self.data_dir = data_dir or os.path.join(self.tmp.name, "data")
        self.port = free_port()
        env = dict(os.environ, SKILLREG_ADMIN_TOKEN=ADMIN)
        self.proc = subprocess.Popen(
            [binary, "serve", "--data-dir", self.data_dir, "--listen", f"127.0.0.1:{self.port}",
             "--no-seed", *extra],
            stdout=subprocess.DEVNULL, stderr=stderr, env=env)
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                if get(self.port, "/healthz")[0] == 200:
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("the server did not start")

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)
        self.tmp.cleanup()


def get(port, path, timeout=60):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def initialize_body(name="flood"):
    return json.dumps({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": name, "version": "0"}},
    })


MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def probe_metrics(binary):
    server = Server(binary)
    try:
        before = len(get(server.port, "/metrics")[1])
        rss_before = rss(server.proc.pid)
        sent = 0
        for i in range(2000):
            method = f"M{i:07d}" + "X" * 7992
            with socket.create_connection(("127.0.0.1", server.port)) as s:
                s.sendall(f"{method} /x HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
                s.recv(1024)
            sent += len(method)
        after = len(get(server.port, "/metrics")[1])
        return {"requests": 2000, "bytes_sent": sent, "metrics_bytes_before": before,
                "metrics_bytes_after": after, "rss_before": rss_before,
                "rss_after": rss(server.proc.pid)}
    finally:
        server.stop()


def probe_sessions(binary, extra=()):
    server = Server(binary, extra)
    try:
        rss_before = rss(server.proc.pid)
        counts = {}
        lock = threading.Lock()

        def worker(n):
            conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
            local = {}
            for _ in range(n):
                conn.request("POST", "/mcp", body=initialize_body(), headers=MCP_HEADERS)
                resp = conn.getresponse()
                resp.read()
                local[resp.status] = local.get(resp.status, 0) + 1
                if resp.getheader("Connection", "").lower() == "close":
                    conn.close()
                    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
            conn.close()
            with lock:
                for k, v in local.items():
                    counts[k] = counts.get(k, 0) + v

        started = time.time()
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            list(pool.map(worker, [1250] * 8))
        elapsed = time.time() - started
        time.sleep(1)
        return {"initialize": 10000, "seconds": round(elapsed, 2),
                "answers": {str(k): v for k, v in sorted(counts.items())},
                "rss_before": rss_before, "rss_after": rss(server.proc.pid)}
    finally:
        server.stop()


def probe_halfopen(binary):
    server = Server(binary)
    try:
        base = fds(server.proc.pid)
        socks, refused = [], 0
        for _ in range(3000):
            s = socket.socket()
            s.settimeout(1)
            try:
                s.connect(("127.0.0.1", server.port))
                s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: ")
                socks.append(s)
            except OSError:
                # Past the connection cap and the listen backlog, the kernel stops answering.
                refused += 1
                s.close()
        time.sleep(2)
        during = fds(server.proc.pid)
        started = time.time()
        # From another address: the flood's own address holds its share of connections.
        ok = get_from(server.port, "/healthz", "127.0.0.7", timeout=30)[0] == 200
        healthz_during = time.time() - started
        time.sleep(12)
        after = fds(server.proc.pid)
        for s in socks:
            s.close()
        return {"connections": 3000, "not_connected_in_1s": refused, "fds_idle": base, "fds_during": during,
                "fds_after_timeout": after, "healthz_during_ok": ok,
                "healthz_during_seconds": round(healthz_during, 3)}
    finally:
        server.stop()


def probe_logs(binary):
    tmp = tempfile.TemporaryDirectory(prefix="skillreg-flood-log-")
    log_path = os.path.join(tmp.name, "stderr.log")
    with open(log_path, "wb") as log:
        server = Server(binary, stderr=log)
        try:
            before = os.path.getsize(log_path)
            name = "n" * 3_000_000
            for _ in range(10):
                conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
                conn.request("POST", "/mcp", body=initialize_body(name), headers=MCP_HEADERS)
                conn.getresponse().read()
                conn.close()
            time.sleep(0.5)
            grown = os.path.getsize(log_path) - before
        finally:
            server.stop()
    tmp.cleanup()
    return {"requests": 10, "client_name_bytes": 3_000_000, "log_bytes_written": grown}


def write_skill(root, name, body, files=()):
    d = os.path.join(root, name)
    os.makedirs(os.path.join(d, "assets"), exist_ok=True)
    with open(os.path.join(d, "SKILL.md"), "w") as f:
        f.write(f"---\nname: {name}\ndescription: A heavy skill for the flood probe.\n---\n{body}")
    for path, data in files:
        with open(os.path.join(d, path), "wb") as f:
            f.write(data)


def probe_heavy(binary):
    tmp = tempfile.TemporaryDirectory(prefix="skillreg-flood-heavy-")
    rng = random.Random(7)
    src = os.path.join(tmp.name, "src")
    write_skill(src, "heavy", "# Heavy\n",
                [(f"assets/blob-{i}.bin", rng.randbytes(1 << 20)) for i in range(15)])
    write_skill(src, "bigmd", "Step: reconcile the ledger, then *check* it.\n" * 280_000)
    data = os.path.join(tmp.name, "data")
    subprocess.run([binary, "import", "--data-dir", data, "--namespace", "beta", "--version",
                    "1.0.0", src], check=True, stdout=subprocess.DEVNULL)
    server = Server(binary, data_dir=data)
    try:
        def healthz():
            started = time.perf_counter()
            assert get(server.port, "/healthz")[0] == 200
            return time.perf_counter() - started

        idle = [healthz() for _ in range(50)]

        def under(load, jobs, parallel):
            done = threading.Event()
            probes = []

            def prober():
                while not done.is_set():
                    probes.append(healthz())
                    time.sleep(0.01)

            t = threading.Thread(target=prober)
            t.start()
            started = time.time()
            with concurrent.futures.ThreadPoolExecutor(parallel) as pool:
                sizes = list(pool.map(lambda _: len(get(server.port, load)[1]), range(jobs)))
            elapsed = time.time() - started
            done.set()
            t.join()
            return {"requests": jobs, "parallel": parallel, "seconds": round(elapsed, 2),
                    "bytes_each": sizes[0], "healthz_probes": len(probes),
                    "healthz_median_ms": round(statistics.median(probes) * 1000, 2),
                    "healthz_max_ms": round(max(probes) * 1000, 2)}

        return {"healthz_idle_median_ms": round(statistics.median(idle) * 1000, 2),
                "archives": under("/v1/skills/beta/heavy/1.0.0/archive", 32, 16),
                "renders": under("/skills/beta/bigmd", 16, 16)}
    finally:
        server.stop()
        tmp.cleanup()


def probe_connflood(binary, n=1100, seconds=15):
    """N half-header connections from 127.0.0.1, each reopened when the server closes it (the
    header timeout, or the per-client cap at once), while a victim at 127.0.0.7 polls /healthz."""
    server = Server(binary)
    stop = threading.Event()
    opened = [0]

    def attacker():
        socks = []

        def open_one():
            s = socket.socket()
            s.settimeout(1)
            try:
                s.connect(("127.0.0.1", server.port))
                s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: ")
                s.setblocking(False)
                opened[0] += 1
                return s
            except OSError:
                s.close()
                return None

        while not stop.is_set() and len(socks) < n:
            s = open_one()
            if s is not None:
                socks.append(s)
        while not stop.is_set():
            for i, s in enumerate(socks):
                if stop.is_set():
                    break
                try:
                    closed = s.recv(1) == b""
                except BlockingIOError:
                    closed = False
                except OSError:
                    closed = True
                if closed:
                    s.close()
                    socks[i] = open_one() or socket.socket()
            time.sleep(0.05)
        for s in socks:
            s.close()

    try:
        idle = []
        for _ in range(20):
            started = time.perf_counter()
            get_from(server.port, "/healthz", "127.0.0.7")
            idle.append(time.perf_counter() - started)
        t = threading.Thread(target=attacker)
        t.start()
        time.sleep(2)
        samples, failures = [], 0
        end = time.time() + seconds
        while time.time() < end:
            started = time.perf_counter()
            try:
                ok = get_from(server.port, "/healthz", "127.0.0.7", timeout=30)[0] == 200
            except OSError:
                ok = False
            if ok:
                samples.append(time.perf_counter() - started)
            else:
                failures += 1
            time.sleep(0.05)
        stop.set()
        t.join()
        return {"connections": n, "seconds": seconds, "attacker_connects": opened[0],
                "healthz_idle_median_ms": round(statistics.median(idle) * 1000, 2),
                "healthz_samples": len(samples), "healthz_failures": failures,
                "healthz_median_ms": round(statistics.median(samples) * 1000, 2) if samples else None,
                "healthz_max_ms": round(max(samples) * 1000, 2) if samples else None}
    finally:
        server.stop()


def get_from(port, path, source, timeout=60):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout, source_address=(source, 0))
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def probe_bodyhold(binary, n, spread=True, length=4 * 1024 * 1024):
    """N anonymous `POST /mcp` declaring 4 MiB, each sending 4 MiB minus 200 bytes and then
    holding: the server's RSS while they hold. With `spread`, 50 connections per source address
    (127.0.0.x), so that the per-client connection cap is not what bounds them."""
    server = Server(binary)
    chunk = b" " * (length - 200)
    try:
        rss_before = rss(server.proc.pid)
        socks, answers, lock = [], {}, threading.Lock()

        def one(i):
            source = f"127.0.{1 + i // 50 // 250}.{2 + (i // 50) % 250}" if spread else "127.0.0.1"
            s = socket.socket()
            s.settimeout(10)
            try:
                s.bind((source, 0))
                s.connect(("127.0.0.1", server.port))
                s.sendall(f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                          f"Accept: application/json, text/event-stream\r\nContent-Length: {length}\r\n\r\n".encode())
                s.sendall(chunk)
                status = "held"
            except OSError:
                status = "closed"
            s.setblocking(False)
            with lock:
                socks.append((s, status))

        started = time.time()
        with concurrent.futures.ThreadPoolExecutor(32) as pool:
            list(pool.map(one, range(n)))
        elapsed = time.time() - started
        time.sleep(1)
        rss_held = rss(server.proc.pid)
        # What each connection was answered by now (nothing: its body is held).
        for s, status in socks:
            try:
                head = s.recv(12)
                if head.startswith(b"HTTP/1.1 "):
                    status = head[9:12].decode()
            except OSError:
                pass
            answers[status] = answers.get(status, 0) + 1
        socks = [s for s, _ in socks]
        for s in socks:
            s.close()
        return {"connections": n, "spread": spread, "body_bytes": length,
                "seconds_to_send": round(elapsed, 2),
                "answers": answers, "rss_before": rss_before, "rss_held": rss_held}
    finally:
        server.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--skillreg", default="target/release/skillreg")
    ap.add_argument("--only", nargs="*", help="probes to run (default: all)")
    args = ap.parse_args()
    probes = {
        "metrics": lambda: probe_metrics(args.skillreg),
        "sessions": lambda: probe_sessions(args.skillreg),
        "sessions_global": lambda: probe_sessions(
            args.skillreg, ["--max-mcp-sessions-per-client", "100000"]),
        "halfopen": lambda: probe_halfopen(args.skillreg),
        "logs": lambda: probe_logs(args.skillreg),
        "heavy": lambda: probe_heavy(args.skillreg),
        "connflood": lambda: probe_connflood(args.skillreg),
        "bodyhold100": lambda: probe_bodyhold(args.skillreg, 100),
        "bodyhold1000": lambda: probe_bodyhold(args.skillreg, 1000),
        "bodyhold_small": lambda: probe_bodyhold(args.skillreg, 1000, length=255 * 1024),
    }
    results = {}
    for name, run in probes.items():
        if args.only and name not in args.only:
            continue
        print(f"{name} …", file=sys.stderr, flush=True)
        results[name] = run()
        print(json.dumps({name: results[name]}), flush=True)


if __name__ == "__main__":
    main()
