#!/usr/bin/env python3
"""Deep skills/list pages only, over HTTP: p50 and p99 of --requests sequential pages whose
cursors sit at 400 random skills of a synthetic catalog (the deep-page kind of whole_process.py,
without the other five kinds between them). BENCHMARKS.md round six compares a 1M catalog's
figures with a 1k catalog's, alternating builds.

    python3 benches/e2e/deep_pages.py --skillreg target/release/skillreg --data-dir /tmp/b1m

Standard library only; the server is started and stopped as whole_process.py does.
"""

import argparse
import base64
import http.client
import json
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import whole_process as wp  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--skillreg", default="target/release/skillreg")
    ap.add_argument("--data-dir", required=True)
    ap.add_argument("--requests", type=int, default=2000)
    args = ap.parse_args()
    rng = random.Random(7)
    _, proc, port = wp.cold_start(args.skillreg, args.data_dir)
    try:
        n = wp.storage(args.data_dir)["skills"]
        targets = wp.names(args.skillreg, [rng.randrange(n) for _ in range(400)])
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        latencies = []
        for k in range(args.requests):
            _, ns, name = targets[k % len(targets)]
            after = f"skill://{ns}/{name}/SKILL.md"
            cursor = base64.urlsafe_b64encode(after.encode()).decode().rstrip("=")
            began = time.perf_counter()
            r = wp.call(conn, "skills/list", {"cursor": cursor})
            latencies.append(time.perf_counter() - began)
            # Every entry comes after the cursor (a cursor at the catalog's end gives none).
            assert all(e["uri"] > after for e in r["skills"]), r
    finally:
        proc.terminate()
        proc.wait()
    print(json.dumps({"data_dir": args.data_dir, "skills/list (deep page)": wp.percentiles(latencies)}))


if __name__ == "__main__":
    sys.exit(main())
