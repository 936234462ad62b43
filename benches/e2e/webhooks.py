#!/usr/bin/env python3
"""A publish with 100 webhooks registered, 10 of them dead, beside a publish with none: two
`skillreg serve` processes side by side, published to in turns whose order alternates (so that
the machine's noise falls on both alike), each publish timed over HTTP.

    python3 benches/e2e/webhooks.py --skillreg target/release/skillreg --publishes 200

The server with webhooks has 100 on the namespace published to: 90 at a receiver that answers
204 at once, 5 at a port that refuses connections, 5 at one that accepts and never answers (each
holds a sender until its timeout). The receivers stand for other machines: they run in a process
of their own at the lowest CPU priority (nice 19), so that what is measured is the registry's
own work on this machine; they report how many deliveries they answered meanwhile. Standard
library only.
"""

import argparse
import asyncio
import gzip
import http.client
import io
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import whole_process as wp  # noqa: E402

TOKEN = os.environ.get("SKILLREG_BENCH_TOKEN") or os.urandom(32).hex()


def receivers(live_port, silent_port, counts):
    """Serve until SIGTERM: 204 to every request on `live_port`, nothing on `silent_port`;
    then write how many requests were answered to `counts`."""
    answered = 0

    async def live(reader, writer):
        nonlocal answered
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                await reader.readexactly(length)
                answered += 1
                writer.write(b"HTTP/1.1 204 No Content\r\n\r\n")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    held = []

    async def silent(reader, writer):
        held.append(writer)

    async def run():
        stop = asyncio.Event()
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
        a = await asyncio.start_server(live, "127.0.0.1", live_port, backlog=1024)
        b = await asyncio.start_server(silent, "127.0.0.1", silent_port, backlog=1024)
        async with a, b:
            await stop.wait()
        with open(counts, "w") as f:
            f.write(str(answered))

    asyncio.run(run())


def archive(name):
    md = f"---\nname: {name}\ndescription: Timed.\n---\n# {name}\n".encode()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info = tarfile.TarInfo("SKILL.md")
        info.size = len(md)
        tar.addfile(info, io.BytesIO(md))
    return gzip.compress(buf.getvalue())


def request(conn, method, path, body=None, content_type="application/json"):
    headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": content_type}
    conn.request(method, path, body=body, headers=headers)
    resp = conn.getresponse()
    text = resp.read()
    if resp.status >= 300:
        raise RuntimeError(f"{method} {path}: HTTP {resp.status}: {text[:300]}")
    return json.loads(text) if text else None


def serve(binary, data_dir, flags=("--webhook-allow-host", "127.0.0.1"), env=None):
    """A release `skillreg serve` on a free port with TOKEN as its admin token (and `flags`,
    and `env` over this process's environment), once it answers: the process and a connection."""
    port = wp.free_port()
    env = dict(os.environ, SKILLREG_ADMIN_TOKEN=TOKEN, **(env or {}))
    proc = subprocess.Popen(
        [binary, "serve", "--data-dir", data_dir, "--listen", f"127.0.0.1:{port}", "--no-seed",
         *flags],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
    )
    for _ in range(3000):
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            wp.get(conn, "/healthz")
            return proc, conn
        except (ConnectionError, OSError, RuntimeError):
            time.sleep(0.01)
    proc.kill()
    raise RuntimeError("the server did not start")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--skillreg", default="target/release/skillreg")
    ap.add_argument("--publishes", type=int, default=200)
    ap.add_argument("--receivers", nargs=3, type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.receivers:
        live, silent, counts = args.receivers[0], args.receivers[1], f"/tmp/webhooks-bench-{args.receivers[2]}"
        return receivers(live, silent, counts)

    live, silent, refused = wp.free_port(), wp.free_port(), wp.free_port()
    tag = os.getpid()
    helper = subprocess.Popen(
        ["nice", "-n", "19", sys.executable, os.path.abspath(__file__), "--receivers", str(live), str(silent), str(tag)]
    )
    for _ in range(3000):
        try:
            socket.create_connection(("127.0.0.1", live), timeout=1).close()
            break
        except OSError:
            time.sleep(0.01)
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        servers = []
        try:
            for hooks, data_dir in [(0, a), (100, b)]:
                proc, conn = serve(args.skillreg, data_dir)
                servers.append({"hooks": hooks, "proc": proc, "conn": conn, "times": []})
                for i in range(hooks):
                    port = refused if i < 5 else silent if i < 10 else live
                    request(conn, "POST", "/v1/namespaces/acme/webhooks",
                            json.dumps({"url": f"http://127.0.0.1:{port}/h{i}", "types": []}))
            for k in range(args.publishes):
                order = servers if k % 2 == 0 else servers[::-1]
                for s in order:
                    body = archive(f"s{k}")
                    began = time.perf_counter()
                    request(s["conn"], "PUT", f"/v1/skills/acme/s{k}/1.0.0", body, "application/gzip")
                    s["times"].append(time.perf_counter() - began)
            attempted = sum(
                1 for h in request(servers[1]["conn"], "GET", "/v1/namespaces/acme/webhooks")["webhooks"]
                if h.get("last_attempt_at")
            )
        finally:
            for s in servers:
                s["proc"].terminate()
                s["proc"].wait()
            helper.terminate()
            helper.wait()
    counts = f"/tmp/webhooks-bench-{tag}"
    answered = int(open(counts).read()) if os.path.exists(counts) else None
    if answered is not None:
        os.remove(counts)
    result = {}
    for s in servers:
        t = sorted(s["times"])
        result[f"{s['hooks']} webhooks"] = {
            "publishes": len(t),
            "p50_ms": round(statistics.median(t) * 1000, 2),
            "p90_ms": round(t[int(len(t) * 0.9)] * 1000, 2),
        }
    result["ratio of p50 (100 / none)"] = round(
        result["100 webhooks"]["p50_ms"] / result["0 webhooks"]["p50_ms"], 2)
    result["hooks attempted meanwhile"] = attempted
    result["deliveries answered meanwhile"] = answered
    print(json.dumps(result))


if __name__ == "__main__":
    sys.exit(main())
