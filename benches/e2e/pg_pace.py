#!/usr/bin/env python3
"""PostgreSQL beside SQLite in one run: bulk publish and uncached in-process reads, for one or
two builds, and the CPU each engine spends per uncached read.

Each round, for each build (the order alternates from round to round): `skillreg-bench generate`
of the same synthetic catalog into a fresh SQLite data directory and into a fresh PostgreSQL
database (skills/s of the storing, not of the index build that follows), then `skillreg-bench
latency` on both. After the rounds, with the last build, the CPU per uncached read: one
`latency --only OP` run per operation on each engine, the harness process's own CPU (the
replica's work, in-process) and the PostgreSQL cluster's (every process under its postmaster)
read around it, less an empty run's (opening the registry).

    python3 benches/e2e/pg_pace.py --bench before=/tmp/b/skillreg-bench --bench after=target/release/skillreg-bench \\
        --database-url postgres://skillreg@127.0.0.1:55497 --pg-data /tmp/skillreg-postgres-55497/data \\
        --skills 10000 --rounds 3 --out pg-pace.json

Needs `psql` (to create and drop the databases). Prints a Markdown summary; --out keeps every
figure.
"""

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CLK = os.sysconf("SC_CLK_TCK")


def cluster_cpu(pg_data: Path) -> float:
    """CPU seconds of the postmaster and its children (backends, writers), those that exited
    included (the postmaster reaps them: their CPU is in its cutime and cstime)."""
    pid = int((pg_data / "postmaster.pid").read_text().split()[0])
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        # After the command: state, ppid, ...; utime, stime, cutime, cstime are stat's fields
        # 14-17 (indexes 11-14 here).
        if int(entry.name) == pid:
            total += sum(int(f) for f in fields[11:15]) / CLK
        elif int(fields[1]) == pid:
            total += (int(fields[11]) + int(fields[12])) / CLK
    return total


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def psql(url: str, sql: str) -> None:
    subprocess.run(["psql", "-q", "-X", "-v", "ON_ERROR_STOP=1", f"{url}/postgres", "-c", sql],
                   check=True, stdout=subprocess.DEVNULL)


def run(cmd: list[str]) -> str:
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return out.stdout


def generate(bench: str, skills: int, data_dir: Path, url: str | None) -> float:
    cmd = [bench, "generate", "--skills", str(skills), "--data-dir", str(data_dir)]
    if url:
        cmd += ["--database-url", url]
    out = run(cmd)
    m = re.search(r"stored \d+ skills in [\d.]+ s \(([\d.]+) skills/s\)", out)
    if not m:
        sys.exit(f"no throughput in: {out}")
    return float(m.group(1))


def latency(bench: str, data_dir: Path, url: str | None, iterations: int, only: str | None = None):
    cmd = [bench, "latency", "--json", "--iterations", str(iterations), "--data-dir", str(data_dir)]
    if url:
        cmd += ["--database-url", url]
    if only is not None:
        cmd += ["--only", only]
    return {r["operation"]: r for r in json.loads(run(cmd))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", action="append", required=True, metavar="LABEL=PATH",
                    help="a skillreg-bench build (repeat for before/after)")
    ap.add_argument("--database-url", required=True, help="a PostgreSQL server, without database")
    ap.add_argument("--pg-data", type=Path, required=True, help="its data directory (for its CPU)")
    ap.add_argument("--skills", type=int, default=10000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iterations", type=int, default=1000)
    ap.add_argument("--cpu-iterations", type=int, default=2000)
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "pg-pace")
    ap.add_argument("--out", type=Path, default=Path("pg-pace.json"))
    args = ap.parse_args()
    builds = [tuple(b.split("=", 1)) for b in args.bench]
    url = args.database_url.rstrip("/")
    results: dict = {"started": time.strftime("%Y-%m-%d %H:%M:%S"), "skills": args.skills,
                     "rounds": [], "cpu": {}}
    for rnd in range(args.rounds):
        order = builds if rnd % 2 == 0 else builds[::-1]
        this = {}
        for label, bench in order:
            shutil.rmtree(args.work, ignore_errors=True)
            args.work.mkdir(parents=True)
            db = "pgpace"
            psql(url, f"DROP DATABASE IF EXISTS {db}")
            psql(url, f"CREATE DATABASE {db}")
            lite, pg = args.work / "sqlite", args.work / "pg"
            cell = {
                "sqlite_skills_per_s": generate(bench, args.skills, lite, None),
                "pg_skills_per_s": generate(bench, args.skills, pg, f"{url}/{db}"),
            }
            # As after any bulk load: statistics for the planner, and no vacuum or checkpoint
            # of the load left to run during the reads.
            subprocess.run(["psql", "-q", "-X", f"{url}/{db}", "-c", "VACUUM ANALYZE", "-c", "CHECKPOINT"],
                           check=True, stdout=subprocess.DEVNULL)
            cell["sqlite_latency"] = latency(bench, lite, None, args.iterations)
            cell["pg_latency"] = latency(bench, pg, f"{url}/{db}", args.iterations)
            this[label] = cell
            print(f"round {rnd + 1} {label}: publish SQLite {cell['sqlite_skills_per_s']:.0f} "
                  f"PostgreSQL {cell['pg_skills_per_s']:.0f} skills/s", file=sys.stderr, flush=True)
            last = (label, bench, lite, pg, f"{url}/{db}")
        results["rounds"].append(this)
    # CPU per uncached read, with the last build given, on the catalogs left by the last cell
    # (every build writes the same tables).
    _, _, lite, pg, pg_url = last
    label, bench = builds[-1]
    ops = list(results["rounds"][-1][label]["pg_latency"])
    for engine, data_dir, u in (("sqlite", lite, None), ("pg", pg, pg_url)):
        def measured(only):
            c0, p0 = children_cpu(), cluster_cpu(args.pg_data)
            latency(bench, data_dir, u, args.cpu_iterations, only)
            return children_cpu() - c0, cluster_cpu(args.pg_data) - p0
        base = measured("no such operation")
        for op in ops:
            own, server = measured(op)
            results["cpu"].setdefault(op, {})[engine] = {
                "replica_us": round((own - base[0]) / args.cpu_iterations * 1e6, 1),
                "postgres_us": round((server - base[1]) / args.cpu_iterations * 1e6, 1),
            }
    results["cpu_build"] = label
    psql(url, "DROP DATABASE IF EXISTS pgpace")
    shutil.rmtree(args.work, ignore_errors=True)
    args.out.write_text(json.dumps(results, indent=2))

    # Summary: ranges over rounds.
    def rng(values, fmt="{:.0f}"):
        lo, hi = min(values), max(values)
        return fmt.format(lo) if fmt.format(lo) == fmt.format(hi) else f"{fmt.format(lo)}–{fmt.format(hi)}"

    print(f"\nbulk publish, {args.skills} skills, {args.rounds} rounds (skills/s; PostgreSQL/SQLite per round)\n")
    print("| build | SQLite | PostgreSQL | ratio |\n| --- | --: | --: | --: |")
    for label, _ in builds:
        cells = [r[label] for r in results["rounds"]]
        s = [c["sqlite_skills_per_s"] for c in cells]
        p = [c["pg_skills_per_s"] for c in cells]
        print(f"| {label} | {rng(s)} | {rng(p)} | {rng([b / a for a, b in zip(s, p)], '{:.2f}×')} |")
    print("\nin-process p50 µs (ranges over rounds; ratio = SQLite p50 / PostgreSQL p50 per round)\n")
    head = "| operation | " + " | ".join(f"{l} SQLite | {l} PostgreSQL | {l} ratio" for l, _ in builds) + " |"
    print(head)
    print("| --- |" + " --: |" * (3 * len(builds)))
    for op in ops:
        row = [op]
        for label, _ in builds:
            cells = [r[label] for r in results["rounds"]]
            s = [c["sqlite_latency"][op]["p50_us"] for c in cells]
            p = [c["pg_latency"][op]["p50_us"] for c in cells]
            row += [rng(s), rng(p), rng([a / b for a, b in zip(s, p)], "{:.2f}×")]
        print("| " + " | ".join(row) + " |")
    print(f"\nCPU per call ({label}, {args.cpu_iterations} calls, µs)\n")
    print("| operation | SQLite process | PostgreSQL replica | PostgreSQL server |\n| --- | --: | --: | --: |")
    for op in ops:
        c = results["cpu"][op]
        print(f"| {op} | {c['sqlite']['replica_us']:.0f} | {c['pg']['replica_us']:.0f} | {c['pg']['postgres_us']:.0f} |")


if __name__ == "__main__":
    main()
