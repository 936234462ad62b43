#!/usr/bin/env python3
"""The web catalog's pages beside the REST call behind them, over HTTP: p50 and p99 of
--requests sequential requests of each kind, on one keep-alive connection, the deep ones with
their cursor at a different random skill each time (so that a deep web page is never one the
server keeps: it measures a page made, where the first page is the one kept). The kinds take turns (one request of
each per round), so that the machine's noise falls on all of them alike, and each web page's
p50 is also given as a ratio to the REST page behind it.

    python3 benches/e2e/web_pages.py --skillreg target/release/skillreg --data-dir /tmp/b1m

Kinds: REST `GET /v1/skills?limit=50` (first page, and deep: its cursor at a random skill) and
the web catalog `GET /` (the same 50 skills by name, first and deep), and the web catalog most
recently published first (`/?sort=recent`, first and deep: the cursor at a random skill's last
publish time, read from the catalog's SQLite database). Every answer is checked (status 200, 50
skills). Standard library only; the server is started and stopped as whole_process.py does.
"""

import argparse
import base64
import http.client
import json
import os
import statistics
import sqlite3
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import whole_process as wp  # noqa: E402


def b64(text):
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def get(conn, path):
    conn.request("GET", path)
    r = conn.getresponse()
    body = r.read()
    assert r.status == 200, (path, r.status, body[:200])
    return body


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--skillreg", default="target/release/skillreg")
    ap.add_argument("--data-dir", required=True)
    ap.add_argument("--requests", type=int, default=500)
    args = ap.parse_args()
    db = sqlite3.connect(f"file:{os.path.join(args.data_dir, 'skillreg.db')}?mode=ro", uri=True)
    # Deep targets: a random skill per round, each with its last publish time (for the recent
    # order).
    rows = db.execute(
        "SELECT n.name, s.name, s.last_published_at FROM skills s JOIN namespaces n ON n.id = s.namespace_id"
        " WHERE s.last_published_at IS NOT NULL ORDER BY random() LIMIT ?",
        (args.requests,),
    ).fetchall()
    db.close()
    kinds = {
        "REST /v1/skills (first page)": lambda i: "/v1/skills?limit=50",
        "REST /v1/skills (deep page)": lambda i: f"/v1/skills?limit=50&cursor={b64(f'{rows[i][0]}/{rows[i][1]}')}",
        "web / by name (first page)": lambda i: "/",
        "web / by name (deep page)": lambda i: f"/?cursor={b64(f'n{rows[i][0]}/{rows[i][1]}')}",
        "web /?sort=recent (first page)": lambda i: "/?sort=recent",
        "web /?sort=recent (deep page)": lambda i: f"/?sort=recent&cursor={b64(f'r{rows[i][2]} {rows[i][0]}/{rows[i][1]}')}",
    }
    _, proc, port = wp.cold_start(args.skillreg, args.data_dir)
    latencies = {kind: [] for kind in kinds}
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        for k in range(args.requests):
            for kind, path in kinds.items():
                p = path(k % len(rows))
                began = time.perf_counter()
                body = get(conn, p)
                latencies[kind].append(time.perf_counter() - began)
                if kind.startswith("REST"):
                    items = json.loads(body)["items"]
                else:
                    items = body.decode().split('class="skill-link"')[1:]
                # A cursor near the catalog's end leaves fewer than 50.
                assert len(items) == 50 or "deep" in kind, (kind, p, len(items))
        results = {kind: wp.percentiles(lat) for kind, lat in latencies.items()}
        p50 = {kind: statistics.median(lat) for kind, lat in latencies.items()}
        results["web p50 / REST p50"] = {
            "first page, by name": round(p50["web / by name (first page)"] / p50["REST /v1/skills (first page)"], 2),
            "deep page, by name": round(p50["web / by name (deep page)"] / p50["REST /v1/skills (deep page)"], 2),
        }
    finally:
        proc.terminate()
        proc.wait()
    print(json.dumps({"data_dir": args.data_dir, **results}))


if __name__ == "__main__":
    sys.exit(main())
