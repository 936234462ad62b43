#!/usr/bin/env python3
"""`skillreg sync` with sources that never answer: how long it takes to give them up while the
next source is still read. The figures of RELIABILITY.md's "Sources that never answer".

    python3 benches/e2e/silent_sources.py --skillreg target/debug/skillreg [--timeout 5] [--cap 120]

A data directory gets three sources, in this order: an MCP upstream and a Git remote (`http://`)
on a loopback port that accepts connections and never sends a byte, written into the SQLite
database directly (as a source recorded while its server still answered would be), then a local
Git repository (read with `import git`). Then a commit is pushed to the repository
and `sync` runs (with `--source-timeout-secs`, when the binary has it), bounded by `--cap`
seconds: it reports how long `sync` ran, whether the cap killed it, and whether the repository's
new skill was stored. Standard library only (and git).
"""

import argparse
import json
import os
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time


def silent_port():
    """A loopback port that accepts every connection and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    held = []

    def accept():
        while True:
            conn, _ = listener.accept()
            held.append(conn)

    threading.Thread(target=accept, daemon=True).start()
    return listener.getsockname()[1]


def git(cwd, *args):
    subprocess.run(
        ["git", "-c", "user.name=b", "-c", "user.email=b@example.com", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def skill(work, name):
    os.makedirs(os.path.join(work, "skills", name), exist_ok=True)
    with open(os.path.join(work, "skills", name, "SKILL.md"), "w") as f:
        f.write(f"---\nname: {name}\ndescription: The {name} skill.\n---\n# {name}\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--skillreg", required=True)
    parser.add_argument("--timeout", type=int, default=5, help="--source-timeout-secs")
    parser.add_argument("--cap", type=float, default=120, help="seconds before sync is killed")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        work = os.path.join(tmp, "work")
        os.makedirs(work)
        git(work, "init", "-q", "-b", "main")
        skill(work, "one")
        git(work, "add", "-A")
        git(work, "commit", "-qm", "one")
        data = os.path.join(tmp, "data")
        url = f"file://{work}"
        # The silent sources first: `sync` reads sources in the order they were recorded.
        subprocess.run(
            [args.skillreg, "sources", "list", "--data-dir", data], check=True, capture_output=True
        )
        port = silent_port()
        db = sqlite3.connect(os.path.join(data, "skillreg.db"))
        for ns, kind, location in [
            ("silent", "mcp", f"http://127.0.0.1:{port}/mcp"),
            ("silentgit", "git", f"http://127.0.0.1:{port}/skills.git"),
        ]:
            db.execute("INSERT OR IGNORE INTO namespaces (name) VALUES (?)", (ns,))
            db.execute(
                "INSERT INTO sources (namespace_id, kind, location) "
                "SELECT id, ?, ? FROM namespaces WHERE name = ?",
                (kind, location, ns),
            )
        db.commit()
        db.close()
        subprocess.run(
            [args.skillreg, "import", "git", url, "--path", "skills", "-n", "acme",
             "--data-dir", data],
            check=True,
            capture_output=True,
        )
        skill(work, "two")
        git(work, "add", "-A")
        git(work, "commit", "-qm", "two")

        help_text = subprocess.run(
            [args.skillreg, "sync", "--help"], capture_output=True, text=True
        ).stdout
        cmd = [args.skillreg, "sync", "--json", "--data-dir", data]
        if "--source-timeout-secs" in help_text:
            cmd += ["--source-timeout-secs", str(args.timeout)]
        started = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            out, _ = proc.communicate(timeout=args.cap)
            killed = False
        except subprocess.TimeoutExpired:
            proc.kill()
            out, _ = proc.communicate()
            killed = True
        took = time.monotonic() - started
        lines = [json.loads(l) for l in out.splitlines() if l.startswith("{")]
        stored = any(l.get("uri") == "skill://acme/two/SKILL.md" for l in lines)
        per_source = {
            l["source"]["location"]: (
                l.get("error", {}).get("code", "ok"),
                l.get("seconds", l.get("summary", {}).get("seconds")),
            )
            for l in lines
            if "source" in l
        }
        print(json.dumps({
            "binary": args.skillreg,
            "source_timeout_secs": args.timeout if "--source-timeout-secs" in cmd else None,
            "sync_seconds": round(took, 2),
            "killed_at_cap": killed,
            "exit": None if killed else proc.returncode,
            "next_source_stored": stored,
            "sources": per_source,
        }, indent=1))


if __name__ == "__main__":
    sys.exit(main())
