#!/usr/bin/env python3
"""Time to ready of a skillreg replica on PostgreSQL: a brand-new one (empty data directory, so
it builds its search index from the database), the same one restarted after other replicas
published more skills (it catches up from the generation its index recorded), and brand-new
ones with and without an index snapshot (`skillreg index-snapshot`, taken before those
publishes: the replica restores it and catches up).

    python3 benches/e2e/replica_ready.py --database-url postgres://…/bench100k \\
        --skillreg target/release/skillreg --bench target/release/skillreg-bench \\
        --from 100000 --more 1000

The database must already hold the catalog (`skillreg-bench generate --database-url …`);
`--from` is the number of skills in it, so the `--more` skills added between the two starts
are new. Ready means `GET /readyz` answers 200. Standard library only.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def time_to_ready(
    skillreg: str, data_dir: str, env: dict, timeout: float, extra: tuple[str, ...] = ()
) -> tuple[float, subprocess.Popen]:
    port = free_port()
    started = time.monotonic()
    proc = subprocess.Popen(
        [skillreg, "serve", "--data-dir", data_dir, "--listen", f"127.0.0.1:{port}", "--no-seed", *extra],
        env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/readyz"
    while time.monotonic() - started < timeout:
        if proc.poll() is not None:
            sys.exit(f"skillreg serve exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return time.monotonic() - started, proc
        except (OSError, urllib.error.URLError):
            pass
        time.sleep(0.05)
    proc.terminate()
    sys.exit(f"not ready after {timeout} s")


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    proc.wait(timeout=60)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--database-url", required=True)
    ap.add_argument("--skillreg", default="target/release/skillreg")
    ap.add_argument("--bench", default="target/release/skillreg-bench")
    ap.add_argument("--from", dest="start", type=int, required=True, help="skills already in the database")
    ap.add_argument("--more", type=int, default=1000, help="skills published while the replica is stopped")
    ap.add_argument("--timeout", type=float, default=3600)
    args = ap.parse_args()

    env = {**os.environ, "SKILLREG_DATABASE_URL": args.database_url, "SKILLREG_LOG": "warn"}
    work = tempfile.mkdtemp(prefix="skillreg-replica-")
    try:
        data = os.path.join(work, "replica")
        fresh, proc = time_to_ready(args.skillreg, data, env, args.timeout)
        stop(proc)
        print(f"brand-new replica ({args.start} skills): ready in {fresh:.2f} s")
        snapshot = os.path.join(work, "index.tar")
        t0 = time.monotonic()
        subprocess.run([args.skillreg, "index-snapshot", snapshot, "--data-dir", data], env=env, check=True,
                       stdout=subprocess.DEVNULL)
        print(f"index-snapshot of that replica's index: {time.monotonic() - t0:.2f} s, "
              f"{os.path.getsize(snapshot) / 1e6:.0f} MB")
        other = os.path.join(work, "publisher")
        t0 = time.monotonic()
        subprocess.run(
            [args.bench, "generate", "--from", str(args.start), "--skills", str(args.more), "--data-dir", other],
            env=env, check=True, stdout=subprocess.DEVNULL,
        )
        print(f"published {args.more} more skills elsewhere in {time.monotonic() - t0:.1f} s")
        restarted, proc = time_to_ready(args.skillreg, data, env, args.timeout)
        stop(proc)
        print(f"restarted replica ({args.more} skills behind): ready in {restarted:.2f} s")
        restored, proc = time_to_ready(args.skillreg, os.path.join(work, "third"), env, args.timeout,
                                       ("--index-snapshot", snapshot))
        stop(proc)
        print(f"brand-new replica from the snapshot ({args.more} skills behind it): ready in {restored:.2f} s")
        rebuilt, proc = time_to_ready(args.skillreg, os.path.join(work, "second"), env, args.timeout)
        stop(proc)
        print(f"brand-new replica without it ({args.start + args.more} skills): ready in {rebuilt:.2f} s")
        print(f"snapshot / no snapshot: {restored / rebuilt:.3f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
