#!/usr/bin/env python3
"""End-to-end HTTP load harness: skillreg against three SEP-2640 peers on one skills directory.

The driver starts every server (skillreg, rmcp's SkillCatalog, the TypeScript SDK's reference
server, FastMCP) on the same directory, and for each server, protocol era and method it builds one
exact request, sends it ONCE and verifies the answer against the files on disk (a JSON-RPC error
arrives with HTTP 200, so an unverified load is worthless). Then it loads each request with wrk
and records throughput, latency and server CPU per request: cell by cell, the servers that have
the cell back to back, `--rounds` times (a cell reports its median round). It reads each server's
peak RSS before stopping it, measures the load generator's own ceiling against `rmcp-catalog
--trivial`, and writes JSON and a markdown table. Standard library only. See README.md beside
this file.

    python3 benches/e2e/run.py --dir /tmp/catalog-1k --out results.json --markdown results.md
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import platform
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
LUA = HERE / "post.lua"

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
ERAS = (MODERN, LEGACY)
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"},
}
SERVERS = ("skillreg", "rmcp", "ts", "fastmcp")
PEERS = ("rmcp", "ts", "fastmcp")
# skillreg on PostgreSQL (--database-url), beside the default SQLite engine, and the previous build
# of skillreg (--base-bin), for a change's before/after; and each server configured as fast as it
# goes, without 2025-era sessions (plain JSON answers, no notifications); and skillreg without
# usage counting, for what counting costs: not run by default.
SKILLREG = ("skillreg", "skillreg-pg", "skillreg-base", "skillreg-stateless", "skillreg-uncounted")
RMCP = ("rmcp", "rmcp-stateless")
# Columns comparing a skillreg variant with another: (label, numerator, denominator).
VARIANT_RATIOS = (
    ("PostgreSQL/SQLite", "skillreg-pg", "skillreg"),
    ("after/before", "skillreg", "skillreg-base"),
    ("stateless: skillreg/rmcp", "skillreg-stateless", "rmcp-stateless"),
    ("counted/uncounted", "skillreg", "skillreg-uncounted"),
)
SERVER_TITLES = {
    "skillreg": "skillreg",
    "skillreg-pg": "skillreg on PostgreSQL",
    "skillreg-base": "skillreg, the previous build",
    "skillreg-stateless": "skillreg --no-mcp-sessions",
    "skillreg-uncounted": "skillreg --no-usage-counting",
    "rmcp-stateless": "rmcp 3.11.0 SkillCatalog, no sessions, JSON answers",
    "rmcp": "rmcp 3.11.0 SkillCatalog",
    "ts": "TS SDK 2.4.0 reference",
    "fastmcp": "FastMCP 4.1.6",
}

# (key, label, servers that get it: None = every server)
METHODS: list[tuple[str, str, tuple[str, ...] | None]] = [
    ("list", "skills/list (page 1)", None),
    ("list_deep", "skills/list (deep page)", SKILLREG),
    ("get", "skills/get", None),
    ("read_md", "resources/read SKILL.md", None),
    ("read_bin", "resources/read binary", None),
    ("read_ref", "resources/read reference text", None),
    ("dir", "resources/directory/read", None),
    ("complete", "completion/complete", SKILLREG),
    ("search", "tools/call search_skills", SKILLREG),
]
SAFE_SEGMENT = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9._-]*$")


class VerifyError(Exception):
    pass


# ---------------------------------------------------------------------------------------------
# The catalog on disk


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def frontmatter_field(text: str, field: str) -> str:
    """The value of a one-line scalar frontmatter field (enough for name/description targets)."""
    m = re.match(r"^\ufeff?---\r?\n(.*?)\r?\n---", text, re.S)
    if not m:
        return ""
    fm = m.group(1)
    mm = re.search(rf"^{re.escape(field)}:\s*(.*)$", fm, re.M)
    if not mm:
        return ""
    value = mm.group(1).strip()
    if value in (">", "|", ">-", "|-"):
        # folded or literal block: join the indented lines that follow
        rest = fm[mm.end():].splitlines()
        lines = []
        for line in rest[1:] if rest and rest[0] == "" else rest:
            if line.startswith((" ", "\t")):
                lines.append(line.strip())
            else:
                break
        value = " ".join(lines)
    return value.strip("'\"")


class Catalog:
    def __init__(self, root: Path):
        self.root = root.resolve()
        self.skills = sorted(
            p.name
            for p in self.root.iterdir()
            if p.is_dir() and not p.name.startswith(".") and (p / "SKILL.md").is_file()
        )
        if not self.skills:
            raise SystemExit(f"no <skill>/SKILL.md under {self.root}")
        files = [p for p in self.root.rglob("*") if p.is_file()]
        self.file_count = len(files)
        self.total_bytes = sum(p.stat().st_size for p in files)

        def nearest(least: int, target: int, fits) -> tuple[str, int] | None:
            """(path under the root, size) of the file of >= `least` bytes nearest `target`
            bytes among those beside a skill's SKILL.md (not one) that `fits(path, parts)`."""
            found = []
            for p in files:
                rel = p.relative_to(self.root)
                parts = rel.parts
                if p.name == "SKILL.md" or parts[0] not in self.skills or not fits(p, parts):
                    continue
                if not all(SAFE_SEGMENT.match(s) for s in parts):
                    continue
                size = p.stat().st_size
                if size >= least:
                    found.append((abs(size - target), str(rel), size))
            return min(found)[1:] if found else None

        # The "200 KB binary": a file of >= 150 KB in a skill's subdirectory, nearest 200 KB.
        big = nearest(150 * 1024, 200 * 1024, lambda p, parts: len(parts) >= 3)
        if big is None:
            raise SystemExit(f"no file of >= 150 KB under {self.root} for the binary read")
        rel, self.bin_size = big
        self.bin_skill, self.bin_path = rel.split("/", 1)

        # The "reference text": a Markdown file of >= 16 KB, nearest 48 KB; text the server
        # escapes into its JSON. None in a catalog without one.
        ref = nearest(16 * 1024, 48 * 1024, lambda p, parts: len(parts) >= 2 and p.suffix == ".md")
        rel, self.ref_size = ref or (None, 0)
        self.ref_skill, self.ref_path = rel.split("/", 1) if rel else (None, None)

        # Target skill for skills/get, SKILL.md read and directory read: the middle skill by
        # name that has a subdirectory (so the directory read lists one), else the middle skill.
        mid = len(self.skills) // 2
        order = self.skills[mid:] + self.skills[:mid]
        self.skill = next(
            (
                s
                for s in order
                if SAFE_SEGMENT.match(s)
                and any(c.is_dir() and not c.name.startswith(".") for c in (self.root / s).iterdir())
            ),
            self.skills[mid],
        )
        md = (self.root / self.skill / "SKILL.md").read_text("utf-8", errors="replace")
        self.description = frontmatter_field(md, "description")
        words = [w for w in re.findall(r"[A-Za-z]{4,}", self.description)][:3]
        self.search_query = " ".join(words) or self.skill.replace("-", " ")

    def file(self, skill: str, rel: str) -> bytes:
        return (self.root / skill / rel).read_bytes()

    def children(self, skill: str) -> list[str]:
        return sorted(c.name for c in (self.root / skill).iterdir() if not c.name.startswith("."))


# ---------------------------------------------------------------------------------------------
# HTTP and MCP


def encode_name(value: str) -> str:
    bare = (
        value != ""
        and all(0x20 <= ord(c) <= 0x7E for c in value)
        and not value.startswith((" ", "\t"))
        and not value.endswith((" ", "\t"))
    )
    return value if bare else "=?base64?" + base64.b64encode(value.encode()).decode() + "?="


def build_request(era: str, method: str, params: dict, session: str | None, rid: int = 1):
    params = dict(params)
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    if era == MODERN:
        params["_meta"] = META
        headers["MCP-Protocol-Version"] = MODERN
        headers["Mcp-Method"] = method
        target = (
            params.get("uri")
            if method == "resources/read"
            else params.get("name")
            if method in ("tools/call", "prompts/get")
            else None
        )
        if isinstance(target, str):
            headers["Mcp-Name"] = encode_name(target)
    else:
        headers["MCP-Protocol-Version"] = LEGACY
        if session:
            headers["Mcp-Session-Id"] = session
    body = json.dumps(
        {"jsonrpc": "2.0", "id": rid, "method": method, "params": params},
        separators=(",", ":"),
        ensure_ascii=False,
    ).encode()
    return headers, body


def http_post(url: str, headers: dict, body: bytes, timeout: float = 120.0):
    req = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, dict(resp.headers.items()), resp.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers.items()), e.read()


def parse_body(raw: bytes) -> Any:
    text = raw.decode("utf-8", errors="replace")
    try:
        return json.loads(text)
    except ValueError:
        pass
    found = None
    for line in text.splitlines():
        if line.startswith("data:"):
            try:
                v = json.loads(line[5:].strip())
            except ValueError:
                continue
            if isinstance(v, dict) and "id" in v:
                found = v
    if found is None:
        raise VerifyError(f"no JSON-RPC response in body: {text[:300]!r}")
    return found


def header(headers: dict, name: str) -> str | None:
    for k, v in headers.items():
        if k.lower() == name.lower():
            return v
    return None


def call(url: str, era: str, method: str, params: dict, session: str | None):
    headers, body = build_request(era, method, params, session)
    status, _, raw = http_post(url, headers, body)
    if status != 200:
        raise VerifyError(f"HTTP {status}: {raw[:300]!r}")
    msg = parse_body(raw)
    if "error" in msg:
        e = msg["error"]
        raise VerifyError(f"JSON-RPC error {e.get('code')}: {str(e.get('message'))[:200]}")
    if not isinstance(msg.get("result"), dict):
        raise VerifyError(f"no result object: {json.dumps(msg)[:300]}")
    return msg["result"], headers, body


def open_legacy_session(url: str) -> tuple[str | None, str]:
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": LEGACY,
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "0"},
        },
    }
    status, hdrs, raw = http_post(
        url,
        {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"},
        json.dumps(init).encode(),
    )
    if status != 200:
        raise VerifyError(f"initialize: HTTP {status}: {raw[:300]!r}")
    msg = parse_body(raw)
    if "error" in msg:
        raise VerifyError(f"initialize: JSON-RPC error {msg['error']}")
    version = msg.get("result", {}).get("protocolVersion")
    if version != LEGACY:
        raise VerifyError(f"initialize negotiated {version!r}, not {LEGACY}")
    session = header(hdrs, "Mcp-Session-Id")
    h = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": LEGACY,
    }
    if session:
        h["Mcp-Session-Id"] = session
    status, _, raw = http_post(
        url, h, json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()
    )
    if status not in (200, 202, 204):
        raise VerifyError(f"notifications/initialized: HTTP {status}: {raw[:200]!r}")
    caps = msg["result"].get("capabilities", {})
    return session, json.dumps(caps.get("extensions", {}), separators=(",", ":"))


def content_bytes(result: dict, uri: str) -> bytes:
    contents = result.get("contents")
    if not isinstance(contents, list) or len(contents) != 1:
        raise VerifyError(f"expected one content, got {str(contents)[:200]}")
    c = contents[0]
    if c.get("uri") != uri:
        raise VerifyError(f"content uri {c.get('uri')!r} != {uri!r}")
    if "text" in c:
        return c["text"].encode("utf-8")
    if "blob" in c:
        return base64.b64decode(c["blob"], validate=True)
    raise VerifyError("content has neither text nor blob")


# ---------------------------------------------------------------------------------------------
# Per-server URIs and the method matrix


def uri_of(server: str, skill: str, rel: str | None = None) -> str:
    prefix = "skill://bench/" if server in SKILLREG else "skill://"
    base = prefix + urllib.parse.quote(skill, safe="-._~")
    return base if rel is None else base + "/" + urllib.parse.quote(rel, safe="/-._~")


def check_entry(entry: dict, uri: str, cat: Catalog, server: str, skill: str, extra: str | None):
    if entry.get("uri") != uri:
        raise VerifyError(f"skill uri {entry.get('uri')!r} != {uri!r}")
    fm = entry.get("frontmatter") or {}
    if fm.get("name") != skill:
        raise VerifyError(f"frontmatter.name {fm.get('name')!r} != {skill!r}")
    res = entry.get("resources")
    if not isinstance(res, list):
        raise VerifyError(f"resources is {str(res)[:80]}")
    by_uri = {r.get("uri"): r for r in res}
    for rel in ["SKILL.md"] + ([extra] if extra else []):
        u = uri_of(server, skill, rel)
        data = cat.file(skill, rel)
        r = by_uri.get(u)
        if r is None:
            raise VerifyError(f"manifest lacks {u}")
        if r.get("size") != len(data) or r.get("digest") != "sha256:" + sha256_hex(data):
            raise VerifyError(f"manifest entry for {u} does not match the file on disk")
    expected = sum(
        1 for p in (cat.root / skill).rglob("*") if p.is_file() and not any(
            s.startswith(".") for s in p.relative_to(cat.root / skill).parts)
    )
    if len(res) != expected:
        raise VerifyError(f"manifest lists {len(res)} files, disk has {expected}")


def plan(server: str, cat: Catalog, url: str, era: str, session: str | None, methods: set[str]):
    """Yield (key, label, method, params, verify) for this server; verify(result) -> info str."""
    skill_md = uri_of(server, cat.skill, "SKILL.md")
    extra = cat.bin_path if cat.bin_skill == cat.skill else None
    out = []

    def v_list(result):
        skills = result.get("skills")
        if not isinstance(skills, list) or not skills:
            raise VerifyError(f"skills is {str(skills)[:120]}")
        for s in skills:
            if not isinstance(s, dict) or not {"uri", "frontmatter", "resources"} <= s.keys():
                raise VerifyError(f"bad entry {str(s)[:120]}")
        return f"{len(skills)} skills/page" + (", nextCursor" if result.get("nextCursor") else "")

    out.append(("list", "skills/list", {}, v_list))

    if "list_deep" in methods and server in SKILLREG:
        out.append(("list_deep", "skills/list", None, v_list))  # params filled in lazily

    def v_get(result):
        check_entry(result.get("skill") or {}, skill_md, cat, server, cat.skill, extra)
        if "nextCursor" in result:
            raise VerifyError("skills/get result has nextCursor")
        return f"{len(result['skill']['resources'])} files in manifest"

    out.append(("get", "skills/get", {"uri": skill_md}, v_get))

    def v_read(skill, rel):
        u = uri_of(server, skill, rel)

        def f(result):
            got = content_bytes(result, u)
            want = cat.file(skill, rel)
            if got != want:
                raise VerifyError(f"read {len(got)} bytes, disk has {len(want)} (or they differ)")
            kind = "text" if "text" in result["contents"][0] else "blob"
            return f"{len(got)} bytes as {kind}"

        return f

    out.append(("read_md", "resources/read", {"uri": skill_md}, v_read(cat.skill, "SKILL.md")))
    bin_uri = uri_of(server, cat.bin_skill, cat.bin_path)
    out.append(("read_bin", "resources/read", {"uri": bin_uri}, v_read(cat.bin_skill, cat.bin_path)))
    if cat.ref_path:
        ref_uri = uri_of(server, cat.ref_skill, cat.ref_path)
        out.append(("read_ref", "resources/read", {"uri": ref_uri}, v_read(cat.ref_skill, cat.ref_path)))

    def v_dir(result):
        res = result.get("resources")
        if not isinstance(res, list):
            raise VerifyError(f"resources is {str(res)[:120]}")
        base = uri_of(server, cat.skill) + "/"
        names = sorted(urllib.parse.unquote(r.get("uri", "")[len(base):]) for r in res)
        want = cat.children(cat.skill)
        if names != want:
            raise VerifyError(f"children {names[:8]} != disk {want[:8]}")
        dirs = [r for r in res if r.get("mimeType") == "inode/directory"]
        return f"{len(res)} children ({len(dirs)} dirs)"

    out.append(("dir", "resources/directory/read", {"uri": uri_of(server, cat.skill)}, v_dir))

    prefix = cat.skill[:3]

    def v_complete(result):
        values = (result.get("completion") or {}).get("values")
        if not isinstance(values, list) or not values:
            raise VerifyError(f"completion values {str(values)[:120]}")
        if not all(isinstance(x, str) and x.startswith(prefix) for x in values):
            raise VerifyError(f"a value does not start with {prefix!r}: {values[:5]}")
        if cat.skill not in values and not (result.get("completion") or {}).get("hasMore"):
            raise VerifyError(f"{cat.skill} not among {values[:10]}")
        return f"{len(values)} values"

    out.append((
        "complete",
        "completion/complete",
        {
            "ref": {"type": "ref/resource", "uri": "skill://{namespace}/{name}/SKILL.md"},
            "argument": {"name": "name", "value": prefix},
            "context": {"arguments": {"namespace": "bench"}},
        },
        v_complete,
    ))

    def v_search(result):
        if result.get("isError"):
            raise VerifyError(f"tool error: {str(result.get('content'))[:200]}")
        hits = (result.get("structuredContent") or {}).get("hits")
        if not isinstance(hits, list) or not hits:
            raise VerifyError(f"no hits: {str(result)[:200]}")
        top = [h.get("uri") for h in hits[:10]]
        return f"{len(hits)} hits" + (", target in top 10" if skill_md in top else ", target NOT in top 10")

    out.append((
        "search",
        "tools/call",
        {"name": "search_skills", "arguments": {"query": cat.search_query, "namespace": "bench"}},
        v_search,
    ))
    return [o for o in out if o[0] in methods]


def deep_cursor(url: str, era: str, session: str | None, want_page: int) -> tuple[str, int]:
    """The cursor of page `want_page` (1-based, >= 2), or of the last page if there are fewer."""
    cursor, page, last = None, 1, None
    while True:
        params = {"cursor": cursor} if cursor else {}
        result, _, _ = call(url, era, "skills/list", params, session)
        nxt = result.get("nextCursor")
        if not nxt:
            if last is None:
                raise VerifyError("skills/list has a single page: no deep page to load")
            return last
        page += 1
        cursor = nxt
        last = (nxt, page)
        if page >= want_page:
            return last


# ---------------------------------------------------------------------------------------------
# Servers


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tools_env() -> dict[str, str]:
    candidates = []
    if os.environ.get("SKILLREG_TOOLS"):
        candidates.append(Path(os.environ["SKILLREG_TOOLS"]))
    candidates += [REPO / ".tools", Path.home() / ".cache/skillreg/tools"]
    for d in candidates:
        f = d / "env.sh"
        if f.is_file():
            env = {}
            for line in f.read_text().splitlines():
                m = re.match(r"export (\w+)=(.*)$", line.strip())
                if m:
                    env[m.group(1)] = m.group(2).strip().strip("'\"")
            env.setdefault("SKILLREG_TOOLS", str(d))
            return env
    return {}


def proc_status(pid: int, key: str) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])  # kB
    except OSError:
        return None
    return None


def proc_cpu_seconds(pid: int) -> float | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def wait_idle(server, limit_s: float = 120.0):
    """Wait until the server stops burning CPU (requests left over from the last load drain)."""
    deadline = time.monotonic() + limit_s
    last = server.cpu_seconds()
    while last is not None and time.monotonic() < deadline:
        time.sleep(0.5)
        now = server.cpu_seconds()
        if now is None or now - last < 0.05:
            return
        last = now


class Server:
    def __init__(self, name: str, argv: list[str], log: Path, env: dict | None = None,
                 health: str | None = None, stdout_ready: bool = True):
        self.name, self.argv, self.log = name, argv, log
        self.env, self.health, self.stdout_ready = env, health, stdout_ready
        self.proc: subprocess.Popen | None = None
        self.url: str | None = None

    def start(self, port: int, timeout: float = 600.0) -> str:
        self.log.parent.mkdir(parents=True, exist_ok=True)
        out = self.log.with_suffix(".stdout")
        self._out = open(out, "wb")
        self._err = open(self.log, "wb")
        env = dict(os.environ)
        env.update(self.env or {})
        started = time.monotonic()
        self.proc = subprocess.Popen(self.argv, stdout=self._out, stderr=self._err, env=env,
                                     stdin=subprocess.DEVNULL)
        deadline = started + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"{self.name} exited with {self.proc.returncode}; see {self.log}:\n"
                    + self.log.read_text(errors="replace")[-2000:]
                )
            if self.health:
                try:
                    with urllib.request.urlopen(self.health, timeout=2) as r:
                        if r.status == 200:
                            self.url = f"http://127.0.0.1:{port}/mcp"
                            break
                except (OSError, urllib.error.URLError):
                    pass
            else:
                m = re.search(r"listening (http://\S+)", out.read_text(errors="replace"))
                if m:
                    self.url = m.group(1)
                    break
            time.sleep(0.2)
        else:
            self.stop()
            raise RuntimeError(f"{self.name} not ready after {timeout} s; see {self.log}")
        self.startup_s = time.monotonic() - started
        return self.url

    def peak_rss_kb(self) -> int | None:
        return proc_status(self.proc.pid, "VmHWM") if self.proc else None

    def cpu_seconds(self) -> float | None:
        return proc_cpu_seconds(self.proc.pid) if self.proc else None

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for f in (getattr(self, "_out", None), getattr(self, "_err", None)):
            if f:
                f.close()


def make_server(name: str, args, cat: Catalog, port: int, work: Path, tenv: dict) -> tuple[Server, dict]:
    logs = work / "logs"
    info: dict[str, Any] = {}
    if name in SKILLREG:
        binary = args.base_bin if name == "skillreg-base" else args.skillreg_bin
        # skillreg-pg: the catalog in the (empty) PostgreSQL database --database-url names; the
        # data directory holds only the search index.
        env = {"SKILLREG_DATABASE_URL": args.database_url} if name == "skillreg-pg" else {}
        if args.skillreg_data and name == "skillreg":
            data = Path(args.skillreg_data)
            info["import"] = f"reused {data}"
        else:
            data = work / f"{name}-data"
            shutil.rmtree(data, ignore_errors=True)
            t0 = time.monotonic()
            r = subprocess.run(
                [binary, "import", str(cat.root), "--namespace", "bench", "--data-dir", str(data), "--json"],
                capture_output=True, text=True, env={**os.environ, **env},
            )
            elapsed = time.monotonic() - t0
            lines = [ln for ln in r.stdout.splitlines() if ln.strip()]
            summary = lines[-1] if lines else r.stderr[-500:]
            info["import"] = f"exit {r.returncode} in {elapsed:.1f} s: {summary[:300]}"
            (logs).mkdir(parents=True, exist_ok=True)
            (logs / f"{name}-import.log").write_text(r.stdout + r.stderr)
            if r.returncode not in (0, 1):
                raise RuntimeError(f"skillreg import failed: {r.stderr[-1000:]}")
        argv = [binary, "serve", "--data-dir", str(data), "--listen", f"127.0.0.1:{port}", "--no-seed"]
        if name == "skillreg-stateless":
            argv.append("--no-mcp-sessions")
        if name == "skillreg-uncounted":
            argv.append("--no-usage-counting")
        health = f"http://127.0.0.1:{port}/readyz"
        return Server(name, argv, logs / f"{name}.log", env=env, health=health), info
    if name in RMCP:
        argv = [args.rmcp_bin, "--dir", str(cat.root), "--listen", f"127.0.0.1:{port}"]
        if name == "rmcp-stateless":
            argv.append("--stateless")
        return Server(name, argv, logs / f"{name}.log"), info
    if name == "ts":
        node = args.node or tenv.get("SKILLREG_NODE22")
        if not node:
            raise RuntimeError("no Node 22: pass --node or run scripts/install-test-tools.sh")
        argv = [node, str(REPO / "tests/clients/reference_server.mjs"), "--http", str(port),
                "--dir", str(cat.root), "--page-size", str(args.page_size)]
        env = {"SKILLREG_TOOLS": tenv.get("SKILLREG_TOOLS", "")}
        return Server(name, argv, logs / "ts.log", env=env), info
    if name == "fastmcp":
        py = args.python or tenv.get("SKILLREG_PYTHON")
        if not py:
            raise RuntimeError("no FastMCP venv: pass --python or run scripts/install-test-tools.sh")
        argv = [py, str(REPO / "benches/peers/fastmcp_server.py"), "--dir", str(cat.root),
                "--port", str(port), "--page-size", str(args.page_size)]
        return Server(name, argv, logs / "fastmcp.log"), info
    raise ValueError(name)


# ---------------------------------------------------------------------------------------------
# wrk


WRK_RUNS = 0


def run_wrk(url: str, headers: dict, body: bytes, seconds: float, args, reqfile: Path) -> dict:
    global WRK_RUNS
    WRK_RUNS += 1
    reqfile.write_bytes(
        "".join(f"{k}: {v}\n" for k, v in headers.items()).encode() + b"\n" + body
    )
    # Each run numbers its JSON-RPC ids from its own base, so no id repeats within a session.
    env = dict(os.environ, BENCH_REQUEST=str(reqfile), BENCH_ID_BASE=str(WRK_RUNS * 10**10))
    # wrk takes whole seconds only.
    argv = [args.wrk, f"-t{args.threads}", f"-c{args.connections}", f"-d{int(seconds)}s",
            "--timeout", f"{int(args.timeout)}s", "-s", str(LUA), url]
    r = subprocess.run(argv, capture_output=True, text=True, env=env,
                       timeout=seconds + args.timeout + 60)
    m = re.search(r"^BENCH_RESULT (\{.*\})$", r.stdout, re.M)
    if not m:
        raise RuntimeError(f"wrk printed no BENCH_RESULT (exit {r.returncode}): {r.stdout[-500:]} {r.stderr[-500:]}")
    res = json.loads(m.group(1))
    # Little's law: requests in flight on average. Far below the connection count means some
    # connections sat waiting for an answer that never came (wrk counts those nowhere).
    res["busy_connections"] = round(res["rps"] * res["mean_us"] / 1e6, 2)
    return res


def busy_cpu_seconds() -> float | None:
    """CPU time all cores spent busy since boot (/proc/stat), in seconds."""
    try:
        f = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
        user, nice, system, idle, iowait, irq, softirq, steal = (int(x) for x in f[:8])
        return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError):
        return None


def self_and_children_cpu() -> float:
    import resource

    a = resource.getrusage(resource.RUSAGE_SELF)
    b = resource.getrusage(resource.RUSAGE_CHILDREN)  # wrk runs are waited for, so counted
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime


def wait_quiet(limit_s: float) -> float | None:
    """Wait (up to limit_s) until the machine is idle: under 0.2 cores busy over 2 s, while our
    server has nothing to do. Returns the busy cores last seen."""
    deadline = time.monotonic() + limit_s
    while True:
        b0 = busy_cpu_seconds()
        time.sleep(2)
        b1 = busy_cpu_seconds()
        if b0 is None or b1 is None:
            return None
        cores = (b1 - b0) / 2
        if cores < 0.2 or time.monotonic() >= deadline:
            return round(cores, 2)
        print(f"  (machine busy: {cores:.2f} cores; waiting for it to go quiet)", file=sys.stderr, flush=True)
        time.sleep(8)


def load(url: str, headers: dict, body: bytes, args, reqfile: Path, server=None) -> dict:
    if args.wait_quiet > 0:
        if server:
            wait_idle(server)
        wait_quiet(args.wait_quiet)
    if args.warmup > 0:
        run_wrk(url, headers, body, args.warmup, args, reqfile)
    t0, b0, m0 = time.monotonic(), busy_cpu_seconds(), self_and_children_cpu()
    s0 = server.cpu_seconds() if server else 0.0
    res = run_wrk(url, headers, body, args.duration, args, reqfile)
    wall, b1, m1 = time.monotonic() - t0, busy_cpu_seconds(), self_and_children_cpu()
    s1 = server.cpu_seconds() if server else 0.0
    if None not in (b0, b1, s0, s1) and wall > 0:
        # CPU the server and the generator used, and what everything else on the machine used
        # meanwhile (another build, a stray process): in cores, e.g. 0.5 = half a core.
        res["server_cores"] = round((s1 - s0) / wall, 2)
        res["wrk_cores"] = round((m1 - m0) / wall, 2)
        res["other_cores"] = round(max(0.0, (b1 - b0) - (s1 - s0) - (m1 - m0)) / wall, 2)
    if server and None not in (s0, s1) and res.get("requests"):
        # The server's cost per request, independent of how fast wrk (sharing the cores) pushed:
        # the figure to compare across servers when throughput is bounded by the generator.
        res["server_cpu_us_per_req"] = round((s1 - s0) / res["requests"] * 1e6, 1)
    return res


# ---------------------------------------------------------------------------------------------
# Main


ERROR_KEYS = ("non2xx", "connect_errors", "read_errors", "write_errors", "timeouts")
# skillreg and rmcp close a 2025-11-25 session after 300 s without a request. With every server
# up at once, a session opened at verification waits for all 2026-07-28 cells of every server,
# and between rounds for the other servers' cells: ping it when it has been quiet this long.
SESSION_PING_S = 60.0


@dataclass
class Live:
    """A started server, its record in the results and its 2025-11-25 session."""

    name: str
    server: Server
    url: str
    rec: dict
    session: str | None = None
    last_use: float = field(default_factory=time.monotonic)  # of the session

    def touch(self):
        self.last_use = time.monotonic()


@dataclass
class Job:
    """One verified cell of one server: loaded once per round."""

    live: Live
    key: str
    era: str
    method: str
    params: dict
    session: str | None
    verify: Callable[[dict], str]
    headers: dict
    body: bytes
    reqfile: Path
    cell: dict


def start_server(name: str, args, cat: Catalog, work: Path, tenv: dict, results: dict) -> Live | None:
    port = free_port()
    rec: dict[str, Any] = {"cells": {}, "notes": []}
    results["servers"][name] = rec
    try:
        server, info = make_server(name, args, cat, port, work, tenv)
    except Exception as e:  # noqa: BLE001
        rec["error"] = f"could not prepare: {e}"
        print(f"[{name}] {rec['error']}", file=sys.stderr)
        return None
    rec.update(info)
    try:
        url = server.start(port)
    except Exception as e:  # noqa: BLE001
        rec["error"] = f"could not start: {e}"
        print(f"[{name}] {rec['error']}", file=sys.stderr)
        return None
    rec["startup_s"] = round(server.startup_s, 2)
    rec["argv"] = server.argv
    print(f"[{name}] ready at {url} in {server.startup_s:.1f} s", file=sys.stderr, flush=True)
    return Live(name, server, url, rec)


def verify_cells(live: Live, args, cat: Catalog, work: Path, save) -> list[Job]:
    """Send each cell's request once and check the answer against the disk; the cells that pass
    (and are fast enough to load) come back as jobs."""
    name, server, url, rec = live.name, live.server, live.url, live.rec
    jobs: list[Job] = []
    for era in args.eras:
        session = None
        if era == LEGACY:
            try:
                session, ext = open_legacy_session(url)
                live.session = session
                live.touch()
                rec["notes"].append(
                    f"{LEGACY}: session {'id issued' if session else 'none (stateless)'}; extensions {ext}"
                )
            except Exception as e:  # noqa: BLE001
                for key, label, only in METHODS:
                    if key in args.methods and (only is None or name in only):
                        rec["cells"][f"{key}|{era}"] = {"status": "n/a", "reason": f"session: {e}"}
                save()
                continue
        for key, method, params, verify in plan(name, cat, url, era, session, set(args.methods)):
            only = next(o for k, _, o in METHODS if k == key)
            if only is not None and name not in only:
                continue
            cell: dict[str, Any] = {"method": method}
            rec["cells"][f"{key}|{era}"] = cell
            try:
                if key == "list_deep":
                    cursor, page = deep_cursor(url, era, session, args.deep_page)
                    params = {"cursor": cursor}
                    cell["page"] = page
                wait_idle(server)
                t_verify = time.monotonic()
                result, headers, body = call(url, era, method, params, session)
                cell["single_request_ms"] = round((time.monotonic() - t_verify) * 1000, 2)
                cell["verified"] = verify(result)
            except Exception as e:  # noqa: BLE001
                cell.update(status="n/a", reason=str(e)[:300])
                print(f"[{name}] {key} {era}: n/a: {cell['reason']}", file=sys.stderr, flush=True)
                save()
                continue
            finally:
                if era == LEGACY:
                    live.touch()
            cell["request_bytes"] = len(body)
            single_s = cell["single_request_ms"] / 1000
            if single_s * args.connections > 2 * args.duration:
                # The first request of an era can be slow for other reasons: time two more.
                for _ in range(2):
                    wait_idle(server)
                    t1 = time.monotonic()
                    try:
                        call(url, era, method, params, session)
                    except Exception:  # noqa: BLE001
                        break
                    single_s = min(single_s, time.monotonic() - t1)
                cell["single_request_ms"] = round(single_s * 1000, 2)
            if single_s * args.connections > 2 * args.duration:
                # 16 such requests at once would not finish inside the measured window; the
                # pile-up would also slow the cells after this one.
                cell.update(status="n/a", reason=(
                    f"too slow to load: verified, but one request alone took {single_s:.2f} s, so "
                    f"{args.connections} concurrent ones would not complete within {args.duration} s"))
                print(f"[{name}] {key} {era}: n/a: {cell['reason']}", file=sys.stderr, flush=True)
                save()
                continue
            reqfile = work / f"req-{name}-{key}-{era}.txt"
            jobs.append(Job(live, key, era, method, params, session, verify, headers, body, reqfile, cell))
            save()
    return jobs


def keep_sessions_alive(lives: list[Live]):
    """Ping each 2025-11-25 session that has been quiet for a while, so that its server does not
    close it before its next load (a ping is one tiny request; the measurement waits for idle)."""
    for live in lives:
        if live.session and time.monotonic() - live.last_use > SESSION_PING_S:
            try:
                call(live.url, LEGACY, "ping", {}, live.session)
            except Exception as e:  # noqa: BLE001
                print(f"[{live.name}] ping of the {LEGACY} session failed: {e}", file=sys.stderr, flush=True)
            live.touch()


def measure(job: Job, args, round_no: int):
    """One round of one cell: wrk's warm-up and measured run, appended to cell["rounds"]."""
    try:
        res = load(job.live.url, job.headers, job.body, args, job.reqfile, job.live.server)
    except Exception as e:  # noqa: BLE001
        res = {"error": f"wrk: {e}"[:300]}
    if job.era == LEGACY:
        job.live.touch()
    job.cell.setdefault("rounds", []).append(res)
    if args.rounds > 1:
        what = (
            f"{res['rps']:9.1f} req/s  p50 {res['p50_us']/1000:7.2f} ms  p99 {res['p99_us']/1000:8.2f} ms"
            + (f"  {res['server_cpu_us_per_req']:.0f} µs CPU/req" if "server_cpu_us_per_req" in res else "")
            if "rps" in res else res["error"]
        )
        print(f"[{job.live.name}] {job.key:9s} {job.era}: round {round_no}/{args.rounds}: {what}",
              file=sys.stderr, flush=True)


def median_round(rounds: list[dict]) -> dict | None:
    """The round with the median req/s (the lower middle one for an even count), errors aside."""
    ok = sorted((r for r in rounds if "rps" in r), key=lambda r: r["rps"])
    return ok[(len(ok) - 1) // 2] if ok else None


def round_problems(rounds: list[dict], median: dict) -> list[str]:
    """Failures and errors of the rounds other than the median one (cell_problems has its own)."""
    p = []
    for i, r in enumerate(rounds, 1):
        if r is median:
            continue
        if "error" in r:
            p.append(f"round {i}: {r['error']}")
        errors = [f"{k} {r[k]}" for k in ERROR_KEYS if r.get(k)]
        if errors:
            p.append(f"round {i}: " + ", ".join(errors))
    return p


def finish_cell(job: Job, args):
    """After the last round: the cell takes the median round's numbers (what the table and
    plot.py read), is verified once more, and its problems are listed."""
    cell, name = job.cell, job.live.name
    rounds = cell.get("rounds", [])
    best = median_round(rounds)
    if best is None:
        cell.update(status="error", reason=(rounds[-1]["error"] if rounds else "not loaded"))
        print(f"[{name}] {job.key} {job.era}: error: {cell['reason']}", file=sys.stderr, flush=True)
        return
    cell.update(status="ok", **best)
    cell["median_round"] = next(i for i, r in enumerate(rounds, 1) if r is best)
    cell["avg_response_bytes"] = round(best["bytes"] / best["requests"]) if best["requests"] else None
    # Still correct after the load?
    try:
        result2, _, _ = call(job.live.url, job.era, job.method, job.params, job.session)
        job.verify(result2)
    except Exception as e:  # noqa: BLE001
        cell["after_load"] = f"verification FAILED after load: {e}"[:300]
    if job.era == LEGACY:
        job.live.touch()
    cell["problems"] = cell_problems(cell, args.connections) + round_problems(rounds, best)
    bad = "; ".join(cell["problems"])
    print(
        f"[{name}] {job.key:9s} {job.era}: {best['rps']:9.1f} req/s  p50 {best['p50_us']/1000:7.2f} ms"
        f"  p99 {best['p99_us']/1000:8.2f} ms  ({cell['verified']})"
        + (f"  median of {len(rounds)} rounds" if args.rounds > 1 else "")
        + (f"  PROBLEMS: {bad}" if bad else ""),
        file=sys.stderr, flush=True,
    )


def measure_rounds(jobs: list[Job], lives: list[Live], args, save):
    """Load every verified cell args.rounds times. Within a round, the servers that have a cell
    are measured back to back, so that a machine getting busier or quieter moves their numbers
    together and the ratio of one round compares like with like."""
    groups: list[list[Job]] = []
    for era in args.eras:
        for key, _, _ in METHODS:
            group = [j for j in jobs if j.key == key and j.era == era]
            if group:
                groups.append(group)
    previous: Server | None = None
    for r in range(args.rounds):
        for group in groups:
            # Rotate the order each round: the first server of a cell follows the previous cell's
            # load, the others follow a peer's; no server should always get the same slot.
            k = r % len(group)
            for job in group[k:] + group[:k]:
                keep_sessions_alive(lives)
                if previous is not None and previous is not job.live.server:
                    wait_idle(previous)  # let the last load's leftover requests drain
                wait_idle(job.live.server)
                measure(job, args, r + 1)
                previous = job.live.server
                if r == args.rounds - 1:
                    finish_cell(job, args)
                save()


def stop_servers(lives: list[Live], save):
    for live in lives:
        # Peak RSS and CPU time are readable only while the process lives.
        live.rec["peak_rss_kb"] = live.server.peak_rss_kb()
        live.rec["cpu_s"] = live.server.cpu_seconds()
        live.server.stop()
    save()


def round_ratios(results: dict, cell_key: str, num: str, den: str) -> dict | None:
    """num's req/s ÷ den's and den's server CPU per request ÷ num's, round by round (the two were
    measured back to back in each round), with their median and range over the rounds."""
    cells = [results["servers"].get(s, {}).get("cells", {}).get(cell_key) for s in (num, den)]
    if not all(c and c.get("status") == "ok" for c in cells):
        return None
    rps: list[float | None] = []
    cpu: list[float | None] = []
    # Every loaded cell has one entry per round (an error too), so index i is round i+1 in both;
    # a round that failed on either side has no ratio (None).
    for a, b in zip(*(c.get("rounds") or [c] for c in cells)):
        rps.append(a["rps"] / b["rps"] if a.get("rps") is not None and b.get("rps") else None)
        ca, cb = a.get("server_cpu_us_per_req"), b.get("server_cpu_us_per_req")
        cpu.append(cb / ca if ca and cb is not None else None)
    if all(v is None for v in rps):
        return None
    out: dict[str, Any] = {"rps_of": f"{num}/{den}", "cpu_of": f"{den}/{num}"}
    for name, by_round in (("rps", rps), ("cpu", cpu)):
        values = [v for v in by_round if v is not None]
        if values:
            out[f"{name}_median"] = round(statistics.median(values), 3)
            out[f"{name}_min"] = round(min(values), 3)
            out[f"{name}_max"] = round(max(values), 3)
            out[f"{name}_by_round"] = [None if v is None else round(v, 3) for v in by_round]
    return out


def all_ratios(results: dict) -> dict:
    """results["ratios"]["key|era"][peer]: skillreg against each peer (above 1 = skillreg faster,
    or cheaper in CPU per request); and each of VARIANT_RATIOS present, under its label."""
    cfg = results["config"]
    servers = cfg["servers"]
    pairs = [(p, "skillreg", p) for p in PEERS if p in servers and "skillreg" in servers]
    pairs += [v for v in VARIANT_RATIOS if {v[1], v[2]} <= set(servers)]
    out: dict[str, dict] = {}
    for key, _, _ in METHODS:
        for era in cfg["eras"]:
            for label, num, den in pairs:
                r = round_ratios(results, f"{key}|{era}", num, den)
                if r:
                    out.setdefault(f"{key}|{era}", {})[label] = r
    return out


def run_ceiling(args, work: Path, results: dict, cat: Catalog):
    port = free_port()
    server = Server("trivial", [args.rmcp_bin, "--trivial", "--listen", f"127.0.0.1:{port}"],
                    work / "logs" / "trivial.log")
    try:
        url = server.start(port, timeout=30)
        headers, body = build_request(MODERN, "skills/get", {"uri": uri_of("rmcp", cat.skill, "SKILL.md")}, None)
        res = load(url, headers, body, args, work / "req-trivial.txt", server)
        results["ceiling"] = res
        if res.get("other_cores", 0) > 0.2:
            print(f"WARNING: other processes used {res['other_cores']} cores during the ceiling run",
                  file=sys.stderr, flush=True)
        print(f"[ceiling] {res['rps']:.1f} req/s p50 {res['p50_us']/1000:.2f} ms p99 {res['p99_us']/1000:.2f} ms",
              file=sys.stderr, flush=True)
    except Exception as e:  # noqa: BLE001
        results["ceiling"] = {"error": str(e)[:300]}
    finally:
        server.stop()


def cell_problems(c: dict, connections: int) -> list[str]:
    p = []
    for k in ERROR_KEYS:
        if c.get(k):
            p.append(f"{k} {c[k]}")
    if c.get("requests", 0) >= 50 and c.get("busy_connections", connections) < connections / 4:
        p.append(f"only {c['busy_connections']} of {connections} connections busy on average")
    if c.get("requests") == 0:
        p.append("no request completed within the measured time")
    if c.get("other_cores", 0) > 0.2:
        p.append(f"other processes used {c['other_cores']:.2f} cores meanwhile (noisy machine)")
    if c.get("after_load"):
        p.append(c["after_load"])
    return p


def fmt_rps(c: dict | None) -> str:
    if not c:
        return "–"
    if c.get("status") != "ok":
        return "n/a"
    bad = c.get("problems")
    s = f"{c['rps']:,.0f}" if c["rps"] >= 100 else f"{c['rps']:.1f}"
    return s + (" ⚠" if bad else "")


def fmt_lat(c: dict | None) -> str:
    if not c or c.get("status") != "ok":
        return "–"

    def ms(us):
        v = us / 1000
        return f"{v:.2f}" if v < 10 else f"{v:.1f}" if v < 100 else f"{v:,.0f}"

    return f"{ms(c['p50_us'])} / {ms(c['p99_us'])}"


def fmt_ratio(r: dict | None, name: str) -> str:
    """A median ratio over rounds with its range: 0.91× (0.84–0.97)."""
    if not r or f"{name}_median" not in r:
        return "–"
    return f"{r[name + '_median']:.2f}× ({r[name + '_min']:.2f}–{r[name + '_max']:.2f})"


def markdown(results: dict) -> str:
    cfg = results["config"]
    servers = [s for s in cfg["servers"]]
    peers = [p for p in PEERS if p in servers]
    # One round: the table as it always was. Several: ratios come round by round (see all_ratios)
    # and CPU per request columns join them.
    rounds = cfg.get("rounds", 1)
    ratios = results.get("ratios", {}) if rounds > 1 else {}
    L = []
    L.append(f"# skillreg vs peers: end-to-end HTTP load ({results['started']})")
    L.append("")
    c = results["catalog"]
    L.append(
        f"Catalog `{c['dir']}`: {c['skills']} skills, {c['files']} files, {c['bytes']/1e6:.1f} MB. "
        f"Targets: skill `{c['skill']}`, binary `{c['bin_skill']}/{c['bin_path']}` ({c['bin_size']:,} bytes)"
        + (
            f", reference text `{c['ref_skill']}/{c['ref_path']}` ({c['ref_size']:,} bytes). "
            if c.get("ref_path") else ". "
        )
        + 
        f"Load: wrk -t{cfg['threads']} -c{cfg['connections']}, {cfg['warmup']} s warm-up + {cfg['duration']} s "
        f"measured per cell{' and round' if rounds > 1 else ''}, one fixed request per cell, verified before and "
        "after. "
        + (
            f"{rounds} rounds: in each, a cell's servers are measured back to back, in an order rotated every "
            "round; each server's req/s and latency are those of its round with the median req/s. "
            if rounds > 1 else ""
        )
        + f"Machine: {results['machine']}."
    )
    L.append("")
    ceil = results.get("ceiling") or {}
    if "rps" in ceil:
        L.append(
            f"**Generator ceiling** (same wrk settings against `rmcp-catalog --trivial`, a fixed 45-byte JSON answer): "
            f"{ceil['rps']:,.0f} req/s, p50 {ceil['p50_us']/1000:.2f} ms, p99 {ceil['p99_us']/1000:.2f} ms. "
            "wrk and the server share the machine's cores, so no cell can exceed this."
        )
    elif ceil:
        L.append(f"Generator ceiling: error: {ceil.get('error')}")
    others = sorted(
        cell["other_cores"]
        for rec in results["servers"].values()
        for cell in rec.get("cells", {}).values()
        if cell.get("other_cores") is not None
    )
    if others:
        L.append("")
        L.append(
            f"Other processes on the machine used {others[len(others) // 2]:.2f} cores (median over cells), "
            f"{others[-1]:.2f} at most, while cells were measured; cells above 0.2 are flagged ⚠."
        )
    L.append("")
    head = ["method", "era"]
    for s in servers:
        head += [f"{s} req/s", f"{s} p50/p99 ms"]
    if "skillreg" in servers:
        head += [f"skillreg/{p}" for p in peers]
        if rounds > 1:
            head += [f"CPU/req {p}/skillreg" for p in peers]
    variants = [v for v in VARIANT_RATIOS if {v[1], v[2]} <= set(servers)]
    head += [label for label, _, _ in variants]
    L.append("| " + " | ".join(head) + " |")
    L.append("|" + "|".join(["---"] * 2 + ["--:"] * (len(head) - 2)) + "|")
    footnotes: list[str] = []
    for key, label, only in METHODS:
        if key not in cfg["methods"]:
            continue
        for era in cfg["eras"]:
            row = [label, era]
            cells = {}
            for s in servers:
                cell = results["servers"].get(s, {}).get("cells", {}).get(f"{key}|{era}")
                if only is not None and s not in only:
                    cell = None
                cells[s] = cell
                rps = fmt_rps(cell)
                if cell and cell.get("status") != "ok":
                    reason = " ".join(str(cell.get("reason")).split())
                    footnotes.append(f"{s}, {label}, {era}: {reason}")
                    rps += f" [{len(footnotes)}]"
                elif cell and cell.get("problems"):
                    # Noise alone is explained once above the table; anything else gets a note.
                    serious = [p for p in cell["problems"] if "noisy machine" not in p]
                    if serious:
                        footnotes.append(f"{s}, {label}, {era}: " + "; ".join(cell["problems"]))
                        rps += f" [{len(footnotes)}]"
                row += [rps, fmt_lat(cell)]
            here = ratios.get(f"{key}|{era}", {})
            if "skillreg" in servers and rounds > 1:
                row += [fmt_ratio(here.get(p), "rps") for p in peers]
                row += [fmt_ratio(here.get(p), "cpu") for p in peers]
            elif "skillreg" in servers:
                mine = cells.get("skillreg")
                for p in peers:
                    other = cells.get(p)
                    if mine and other and mine.get("status") == "ok" and other.get("status") == "ok" and other["rps"] > 0:
                        row.append(f"{mine['rps'] / other['rps']:.2f}×")
                    else:
                        row.append("–")
            for variant, num, den in variants:
                if rounds > 1:
                    row.append(fmt_ratio(here.get(variant), "rps"))
                    continue
                a, b = cells.get(num), cells.get(den)
                if a and b and a.get("status") == "ok" and b.get("status") == "ok" and b["rps"] > 0:
                    row.append(f"{a['rps'] / b['rps']:.2f}×")
                else:
                    row.append("–")
            if all(cells.get(s) is None for s in servers):
                continue
            L.append("| " + " | ".join(row) + " |")
    L.append("")
    sizes = []
    for s in servers:
        lp = results["servers"].get(s, {}).get("cells", {}).get(f"list|{MODERN}", {})
        if lp.get("verified"):
            kb = f", {lp['avg_response_bytes']/1024:,.0f} KB/response" if lp.get("avg_response_bytes") else ""
            sizes.append(f"{s} {lp['verified'].split(' ')[0]}{kb}")
    if sizes:
        L.append("skills/list page 1 holds: " + "; ".join(sizes) + " (rmcp's SkillCatalog does not paginate).")
        L.append("")
    if rounds > 1:
        ratio_note = (
            "Ratios are skillreg req/s ÷ peer req/s (above 1 = skillreg faster), taken round by round (the two "
            f"measured back to back) and shown as the median over {rounds} rounds (min–max); CPU/req is the "
            "peer's server CPU time per request ÷ skillreg's, likewise (above 1 = skillreg uses less CPU "
            "per request). "
        )
    else:
        ratio_note = "Ratios are skillreg req/s ÷ peer req/s (above 1 = skillreg faster). "
    L.append(ratio_note + "⚠ = wrk saw HTTP errors, "
             "socket errors or timeouts, or fewer than a quarter of the connections were busy on average, "
             "or other processes used over 0.2 cores during the measurement, or the request failed "
             "verification after the load (see the notes). "
             "\"–\" = not applicable to that server.")
    if footnotes:
        L.append("")
        L.append("**Notes** (n/a: the verification request's answer; ⚠: what wrk or the re-verification saw):")
        L.append("")
        for i, f in enumerate(footnotes, 1):
            L.append(f"{i}. {f}")
    L.append("")
    L.append("**Per server**")
    L.append("")
    L.append("| server | peak RSS (VmHWM) | CPU s (whole run) | startup | notes |")
    L.append("|---|--:|--:|--:|---|")
    for s in servers:
        rec = results["servers"].get(s, {})
        rss = rec.get("peak_rss_kb")
        notes = list(rec.get("notes", []))
        if rec.get("import"):
            notes.insert(0, "import: " + rec["import"])
        if rec.get("error"):
            notes.insert(0, "ERROR: " + rec["error"][:200])
        lp = rec.get("cells", {}).get(f"list|{MODERN}", {})
        if lp.get("verified"):
            notes.append(f"skills/list page 1: {lp['verified']}")
        dp = rec.get("cells", {}).get(f"list_deep|{MODERN}", {})
        if dp.get("page"):
            notes.append(f"deep page = page {dp['page']}")
        for k, cell in rec.get("cells", {}).items():
            if cell.get("after_load"):
                notes.append(f"{k}: {cell['after_load']}")
        L.append(
            f"| {SERVER_TITLES.get(s, s)} | {rss/1024:.0f} MB | {rec.get('cpu_s') or 0:.0f} | "
            f"{rec.get('startup_s', 0):.1f} s | {'; '.join(n.replace('|', '/') for n in notes)} |"
            if rss else f"| {SERVER_TITLES.get(s, s)} | – | – | – | {'; '.join(notes)} |"
        )
    L.append("")
    return "\n".join(L)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", required=True, help="flat directory of skills: DIR/<name>/SKILL.md ...")
    ap.add_argument("--servers", default=",".join(SERVERS))
    ap.add_argument("--eras", default=",".join(ERAS))
    ap.add_argument("--methods", default=",".join(k for k, _, _ in METHODS),
                    help="subset of: " + ",".join(k for k, _, _ in METHODS))
    ap.add_argument("--duration", type=int, default=8, help="measured seconds per cell")
    ap.add_argument("--warmup", type=int, default=1, help="warm-up seconds per cell (discarded; 0 = none)")
    ap.add_argument("--connections", type=int, default=16)
    ap.add_argument("--threads", type=int, default=1, help="wrk threads")
    ap.add_argument("--timeout", type=int, default=30, help="wrk per-request timeout, seconds")
    ap.add_argument("--page-size", type=int, default=100, help="page size for the TS and FastMCP peers")
    ap.add_argument("--deep-page", type=int, default=5, help="which skills/list page is the deep one")
    ap.add_argument("--out", default="results.json")
    ap.add_argument("--markdown", help="the report as Markdown (default: --out with .md)")
    ap.add_argument("--work", default="/tmp/skillreg-e2e-work", help="scratch dir: logs, request files, skillreg data")
    ap.add_argument("--skillreg-bin", default=str(REPO / "target/release/skillreg"))
    ap.add_argument("--base-bin", help="the previous build of skillreg, served as skillreg-base (before/after)")
    ap.add_argument("--skillreg-data", help="serve this already-imported data dir instead of importing --dir")
    ap.add_argument("--database-url", help="empty PostgreSQL database for the skillreg-pg server")
    ap.add_argument("--rmcp-bin", default=str(Path.home() / ".cache/skillreg/peers-target/release/rmcp-catalog"))
    ap.add_argument("--node", help="Node 22 binary (default: SKILLREG_NODE22 from the test tools' env.sh)")
    ap.add_argument("--python", help="FastMCP venv python (default: SKILLREG_PYTHON from env.sh)")
    ap.add_argument("--wrk", default=shutil.which("wrk") or "wrk")
    ap.add_argument("--no-ceiling", action="store_true")
    ap.add_argument("--rounds", type=int, default=1, metavar="N",
                    help="measure every cell N times, all servers back to back in each round (order "
                         "rotated); a cell reports its median round, ratios the median of per-round ratios")
    ap.add_argument("--wait-quiet", type=int, default=0, metavar="SECONDS",
                    help="before each measurement, wait up to SECONDS for the machine to be idle "
                         "(for a shared machine; cells measured while busy are flagged either way)")
    args = ap.parse_args()
    args.servers = [s for s in args.servers.split(",") if s]
    args.eras = [e for e in args.eras.split(",") if e]
    args.methods = [m for m in args.methods.split(",") if m]
    for s in args.servers:
        if s not in SERVERS + SKILLREG + RMCP:
            ap.error(f"unknown server {s}")
    if "skillreg-pg" in args.servers and not args.database_url:
        ap.error("skillreg-pg needs --database-url (an empty PostgreSQL database)")
    if "skillreg-base" in args.servers and not (args.base_bin and Path(args.base_bin).is_file()):
        ap.error("skillreg-base needs --base-bin (the previous build's skillreg binary)")
    for e in args.eras:
        if e not in ERAS:
            ap.error(f"unknown era {e}")
    for m in args.methods:
        if m not in {k for k, _, _ in METHODS}:
            ap.error(f"unknown method {m}")
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")
    if not shutil.which(args.wrk):
        ap.error("wrk not found: run benches/e2e/install.sh")
    if (set(RMCP) & set(args.servers) or not args.no_ceiling) and not Path(args.rmcp_bin).is_file():
        ap.error(f"{args.rmcp_bin} missing: build benches/peers/rmcp-catalog (see README.md)")
    if "skillreg" in args.servers and not Path(args.skillreg_bin).is_file():
        ap.error(f"{args.skillreg_bin} missing: cargo build --release")

    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    cat = Catalog(Path(args.dir))
    tenv = tools_env()
    cpu = ""
    try:
        cpu = next(ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo") if ln.startswith("model name"))
    except (OSError, StopIteration):
        pass
    results: dict[str, Any] = {
        "started": time.strftime("%Y-%m-%d %H:%M:%S"),
        "machine": f"{os.cpu_count()} CPUs ({cpu or platform.machine()}), {platform.system()} {platform.release()}",
        "config": {k: getattr(args, k) for k in (
            "servers", "eras", "methods", "duration", "warmup", "connections", "threads", "timeout",
            "page_size", "deep_page", "rounds")},
        "catalog": {
            "dir": str(cat.root), "skills": len(cat.skills), "files": cat.file_count, "bytes": cat.total_bytes,
            "skill": cat.skill, "bin_skill": cat.bin_skill, "bin_path": cat.bin_path, "bin_size": cat.bin_size,
            "ref_skill": cat.ref_skill, "ref_path": cat.ref_path, "ref_size": cat.ref_size,
            "search_query": cat.search_query,
        },
        "servers": {},
    }

    def save():
        Path(args.out).write_text(json.dumps(results, indent=2) + "\n")

    print(f"catalog: {len(cat.skills)} skills; target {cat.skill}; binary {cat.bin_skill}/{cat.bin_path} "
          f"({cat.bin_size} B)", file=sys.stderr, flush=True)
    t0 = time.monotonic()
    if not args.no_ceiling:
        run_ceiling(args, work, results, cat)
        save()
    # Every server runs from here to the end, so that each cell's servers can be measured back to
    # back (minutes apart, a shared machine's load differs too much to compare them).
    lives: list[Live] = []
    try:
        for name in args.servers:
            live = start_server(name, args, cat, work, tenv, results)
            if live:
                lives.append(live)
            save()
        jobs = [job for live in lives for job in verify_cells(live, args, cat, work, save)]
        measure_rounds(jobs, lives, args, save)
    finally:
        stop_servers(lives, save)
    results["ratios"] = all_ratios(results)
    results["elapsed_s"] = round(time.monotonic() - t0, 1)
    save()
    md = markdown(results)
    Path(args.markdown or Path(args.out).with_suffix(".md")).write_text(md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
