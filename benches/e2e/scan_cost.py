#!/usr/bin/env python3
"""What a publish-time feature costs: import and publish throughput of the real corpus with the
feature on and off, alternating runs so both see the same machine, and the ratio of their
medians. `--feature scan` (the default): the default scan policy against scanning off
(`SKILLREG_SCAN_POLICY='*=off'`); `--feature signing`: every version signed against
`SKILLREG_NO_SIGNING=true`.

    python3 benches/e2e/scan_cost.py --skillreg target/release/skillreg \\
        --corpus ../shared/corpus/real --rounds 5 [--feature signing] [--baseline OLD_BINARY] [--no-publish]

- import: `skillreg import --fix` of the whole corpus into a fresh data directory (one
  process: read, fix, validate, scan, store).
- publish: every corpus skill packed as a .tar.gz beforehand, then `PUT /v1/skills/…` one at a
  time to a fresh `skillreg serve` (what CI pipelines do); skills the server refuses (names
  that need --fix) are refused alike in both modes and not counted.
Standard library only.
"""

from __future__ import annotations

import argparse
import io
import os
import re
import socket
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.request

ADMIN = "bench-admin-6f1c0c7e5f9a4b2d8e3a1c9b7d5f3e1a"
# Each feature's two modes: the environment each run gets.
FEATURES = {
    "scan": {"on": {"SKILLREG_SCAN_POLICY": ""}, "off": {"SKILLREG_SCAN_POLICY": "*=off"}},
    "signing": {"on": {}, "off": {"SKILLREG_NO_SIGNING": "true"}},
}


def env_with(policy: dict) -> dict:
    env = dict(os.environ)
    for key in ("SKILLREG_SCAN_POLICY", "SKILLREG_NO_SIGNING", "SKILLREG_DATABASE_URL"):
        env.pop(key, None)
    env.update(policy)
    return env


def skill_dirs(corpus: str) -> list[str]:
    out = []
    for root, dirs, files in os.walk(corpus):
        dirs.sort()
        if "SKILL.md" in files:
            out.append(root)
    return out


def frontmatter_name(path: str) -> str | None:
    with open(os.path.join(path, "SKILL.md"), encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    if not lines or lines[0].strip() != "---":
        return None
    for line in lines[1:]:
        if line.strip() == "---":
            return None
        if line.startswith("name:"):
            return line[5:].strip().strip("\"'")
    return None


def pack(path: str) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for root, dirs, files in os.walk(path):
            dirs.sort()
            for name in sorted(files):
                full = os.path.join(root, name)
                if os.path.isfile(full) and not os.path.islink(full):
                    tar.add(full, arcname=os.path.relpath(full, path))
    return buf.getvalue()


def time_import(skillreg: str, corpus: str, policy: dict) -> float:
    with tempfile.TemporaryDirectory() as data:
        started = time.monotonic()
        done = subprocess.run(
            [skillreg, "import", "--fix", "--namespace", "bench", "--data-dir", data, corpus],
            env=env_with(policy), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )
        elapsed = time.monotonic() - started
        # 1: some skills were skipped (names that repeat across the corpus' repositories).
        if done.returncode not in (0, 1):
            sys.exit(f"import failed: {done.stderr.decode(errors='replace')}")
        return elapsed


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def time_publish(skillreg: str, archives: list[tuple[str, bytes]], policy: dict) -> tuple[float, int]:
    with tempfile.TemporaryDirectory() as data:
        port = free_port()
        env = env_with(policy)
        env["SKILLREG_ADMIN_TOKEN"] = ADMIN
        env["SKILLREG_RATE_LIMIT_WRITES_PER_MINUTE"] = "0"
        proc = subprocess.Popen(
            [skillreg, "serve", "--data-dir", data, "--listen", f"127.0.0.1:{port}", "--no-seed"],
            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        try:
            base = f"http://127.0.0.1:{port}"
            for _ in range(200):
                try:
                    urllib.request.urlopen(f"{base}/readyz", timeout=1)
                    break
                except (OSError, urllib.error.URLError):
                    time.sleep(0.05)
            stored = 0
            started = time.monotonic()
            for name, body in archives:
                req = urllib.request.Request(
                    f"{base}/v1/skills/bench/{name}/1.0.0", data=body, method="PUT",
                    headers={"Authorization": f"Bearer {ADMIN}", "Content-Type": "application/gzip"},
                )
                try:
                    with urllib.request.urlopen(req, timeout=30) as r:
                        stored += r.status == 201
                except urllib.error.HTTPError:
                    pass
            return time.monotonic() - started, stored
        finally:
            proc.terminate()
            proc.wait()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--skillreg", default="target/release/skillreg")
    ap.add_argument("--corpus", default="../shared/corpus/real")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--import-dir", help="import this folder of skills instead of the corpus "
                    "(e.g. `skillreg-bench generate --skills 10000 --export DIR`); publish still "
                    "sends the corpus")
    ap.add_argument("--baseline", help="another skillreg binary (an earlier build): its imports "
                    "alternate with the others in the same rounds, and the import with scanning "
                    "is also compared with the baseline's import without it")
    ap.add_argument("--no-publish", action="store_true", help="time imports only")
    ap.add_argument("--feature", choices=sorted(FEATURES), default="scan")
    args = ap.parse_args()
    modes = {f"{args.feature} {mode}": env for mode, env in FEATURES[args.feature].items()}
    import_dir = args.import_dir or args.corpus
    dirs = skill_dirs(args.corpus)
    seen, archives = set(), []
    for d in dirs:
        name = frontmatter_name(d)
        # Names that break the rules (they need --fix) would be refused alike: not sent.
        if name and re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", name) and name not in seen:
            seen.add(name)
            archives.append((name, pack(d)))
    print(f"corpus: {len(dirs)} skill directories; {len(archives)} archives with distinct names")
    imports = {k: [] for k in modes}
    baseline = {k: [] for k in modes}
    publishes = {k: [] for k in modes}
    stored = {}
    for r in range(args.rounds):
        order = list(modes.items()) if r % 2 == 0 else list(reversed(modes.items()))
        for label, policy in order:
            imports[label].append(time_import(args.skillreg, import_dir, policy))
            if args.baseline:
                baseline[label].append(time_import(args.baseline, import_dir, policy))
            if not args.no_publish:
                seconds, n = time_publish(args.skillreg, archives, policy)
                publishes[label].append(seconds)
                stored[label] = n
    imported = len(skill_dirs(import_dir)) if args.import_dir else len(dirs)
    runs = [("import", imports, imported)]
    if args.baseline:
        runs.append(("baseline", baseline, imported))
    if not args.no_publish:
        runs.append(("publish", publishes, None))
    medians_of = {}
    for what, timings, count in runs:
        medians = {k: statistics.median(v) for k, v in timings.items()}
        medians_of[what] = medians
        for label, median in medians.items():
            n = count if count is not None else stored[label]
            print(f"{what:8} {label:9} median {median:6.2f} s over {len(timings[label])} runs, {n / median:7.1f} skills/s")
        on, off = f"{args.feature} on", f"{args.feature} off"
        print(f"{what:8} throughput with {args.feature} / without: {medians[off] / medians[on]:.2f}")
    if args.baseline:
        print(f"import with {args.feature} / baseline import without it: "
              f"{medians_of['baseline'][off] / medians_of['import'][on]:.2f}")


if __name__ == "__main__":
    sys.exit(main())
