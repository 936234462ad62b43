#!/usr/bin/env python3
"""Single publishes per second over HTTP: concurrent clients each PUT one small skill after
another to `skillreg serve` (release), on SQLite and on PostgreSQL with one and with two
replicas (the clients spread over them), in rounds whose order alternates. What the scaling
model in BENCHMARKS.md says of writes: a deployment's publish rate is set by the database's
writer, not by the number of replicas.

    python3 benches/e2e/publish_rate.py --skillreg target/release/skillreg \\
        --database-url postgres://skillreg@127.0.0.1:55499 --clients 8 --seconds 10 --rounds 3

Each round gets a fresh SQLite data directory and a fresh PostgreSQL database (created and
dropped with `psql`). Every publish is a new skill (a gzip tarball of one SKILL.md), answered
201 or the run fails (the write rate limit is off). Standard library and psql.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import http.client

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import webhooks  # noqa: E402
from webhooks import TOKEN, archive  # noqa: E402


def psql(server_url, sql):
    subprocess.run(["psql", f"{server_url}/postgres", "-qc", sql], check=True,
                   stdout=subprocess.DEVNULL)


def serve(binary, data_dir, database_url=None):
    """`webhooks.serve` without the write rate limit, on `database_url` when given."""
    env = {"SKILLREG_DATABASE_URL": database_url} if database_url else {}
    if not database_url:
        os.environ.pop("SKILLREG_DATABASE_URL", None)
    proc, conn = webhooks.serve(binary, data_dir, ("--rate-limit-writes-per-minute", "0"), env)
    conn.close()
    return proc, conn.port


def load(ports, clients, seconds, tag):
    """`clients` threads publishing for `seconds`, client i to ports[i % len(ports)]."""
    times = [[] for _ in range(clients)]
    errors = []
    deadline = time.perf_counter() + seconds

    def client(i):
        conn = http.client.HTTPConnection("127.0.0.1", ports[i % len(ports)], timeout=60)
        k = 0
        while time.perf_counter() < deadline:
            name = f"{tag}-c{i}-s{k}"
            body = archive(name)
            began = time.perf_counter()
            conn.request("PUT", f"/v1/skills/rate/{name}/1.0.0", body=body,
                         headers={"Authorization": f"Bearer {TOKEN}",
                                  "Content-Type": "application/gzip"})
            resp = conn.getresponse()
            text = resp.read()
            if resp.status != 201:
                errors.append(f"{resp.status} {text[:200]!r}")
                return
            times[i].append(time.perf_counter() - began)
            k += 1

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - started
    if errors:
        raise RuntimeError(f"publishes refused: {errors[:3]}")
    every = sorted(t for ts in times for t in ts)
    return {
        "publishes": len(every),
        "per_second": round(len(every) / elapsed, 1),
        "p50_ms": round(statistics.median(every) * 1000, 2),
        "p99_ms": round(every[int(len(every) * 0.99)] * 1000, 2),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--skillreg", default="target/release/skillreg")
    ap.add_argument("--database-url", required=True, help="a PostgreSQL server, without database")
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default="publish-rate.json")
    args = ap.parse_args()
    kinds = ["sqlite", "postgres, 1 replica", "postgres, 2 replicas"]
    results = {k: [] for k in kinds}
    for r in range(args.rounds):
        order = kinds if r % 2 == 0 else kinds[::-1]
        for kind in order:
            with tempfile.TemporaryDirectory() as d1, tempfile.TemporaryDirectory() as d2:
                url = None
                if kind.startswith("postgres"):
                    psql(args.database_url, "DROP DATABASE IF EXISTS publish_rate")
                    psql(args.database_url, "CREATE DATABASE publish_rate")
                    url = f"{args.database_url}/publish_rate"
                replicas = 2 if kind.endswith("2 replicas") else 1
                procs = []
                try:
                    for d in [d1, d2][:replicas]:
                        procs.append(serve(args.skillreg, d, url))
                    got = load([p for _, p in procs], args.clients, args.seconds, f"r{r}")
                finally:
                    for proc, _ in procs:
                        proc.terminate()
                        proc.wait()
            results[kind].append(got)
            print(f"round {r + 1} {kind}: {json.dumps(got)}", file=sys.stderr)
    if args.database_url:
        psql(args.database_url, "DROP DATABASE IF EXISTS publish_rate")
    with open(args.out, "w") as f:
        json.dump(results, f, indent=1)
    print(f"\nsingle publishes, {args.clients} clients, {args.seconds:g} s per run, "
          f"{args.rounds} rounds\n")
    print("| deployment | publishes/s | p50 ms | p99 ms | ratio to SQLite (per round) |")
    print("| --- | --: | --: | --: | --: |")
    for kind in kinds:
        rs = results[kind]
        rate = [x["per_second"] for x in rs]
        ratio = [x["per_second"] / s["per_second"] for x, s in zip(rs, results["sqlite"])]
        span = lambda v: f"{min(v):g}–{max(v):g}"  # noqa: E731
        print(f"| {kind} | {span(rate)} | {span([x['p50_ms'] for x in rs])} | "
              f"{span([x['p99_ms'] for x in rs])} | "
              f"{min(ratio):.2f}×–{max(ratio):.2f}× |")


if __name__ == "__main__":
    sys.exit(main())
