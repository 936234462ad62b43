#!/usr/bin/env python3
"""External SEP-2640 client check with FastMCP 4.2's skills client (fastmcp==4.2.3).

Run it with the venv Python that scripts/install-test-tools.sh creates
($SKILLREG_PYTHON_FASTMCP42 in <tools>/env.sh):

    $SKILLREG_PYTHON_FASTMCP42 tests/clients/fastmcp42_skills.py --url http://127.0.0.1:PORT/mcp

With `Client(url, extensions=[SkillsClientExtension()])` it calls `list_skills()`
(every page, following `next_cursor` to the end), then for every listed skill
`read_skill(uri)`: FastMCP reads the entry with `skills/get`, reads every file of
its manifest, checks each file's size and sha256, parses SKILL.md's frontmatter
and requires it to equal the entry's, and requires the URI's last directory
segment to be the skill's name. A skill that reads is installed with
`Skill.to_directory(<tmp>/<n>/<name>)` (one fresh parent per skill, since names
may repeat across namespaces) and every installed file is hashed back from disk.

Prints ONE JSON object on stdout:
    {era, skills: [uri], installed: [{uri, files: [{path, size, sha256}]}],
     refused: [{uri, error}], failures: [{uri, error}]}
`refused` holds the skills `read_skill` or `to_directory` raised for (error is
"<ExceptionType>: <message>"); `failures` holds anything else (listing, the
connection). sha256 is lowercase hex of the bytes on disk; paths are relative
to the installed skill folder, "/"-separated. Exit code 0 when nothing was
refused or failed, 1 otherwise, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import logging
import sys
import tempfile
from pathlib import Path
from typing import Any


def error_text(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}".strip()


def installed_files(root: Path) -> list[dict[str, Any]]:
    files = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        data = path.read_bytes()
        files.append(
            {
                "path": path.relative_to(root).as_posix(),
                "size": len(data),
                "sha256": hashlib.sha256(data).hexdigest(),
            }
        )
    return files


async def run(url: str, report: dict[str, Any]) -> None:
    from fastmcp import Client
    from fastmcp.skills.client import SkillsClientExtension

    client = Client(url, extensions=[SkillsClientExtension()])
    async with client:
        report["era"] = client.protocol_version
        listed = await client.list_skills(cache_mode="bypass")
        with tempfile.TemporaryDirectory(prefix="fastmcp42-skills-") as tmp:
            for n, entry in enumerate(listed):
                report["skills"].append(entry.uri)
                try:
                    skill = await client.read_skill(entry.uri, cache_mode="bypass")
                    root = skill.to_directory(Path(tmp) / str(n) / skill.name)
                except Exception as error:
                    report["refused"].append({"uri": entry.uri, "error": error_text(error)})
                    continue
                report["installed"].append({"uri": entry.uri, "files": installed_files(root)})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True, help="Streamable HTTP endpoint, e.g. http://127.0.0.1:8080/mcp")
    args = parser.parse_args()
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    report: dict[str, Any] = {"era": None, "skills": [], "installed": [], "refused": [], "failures": []}
    try:
        asyncio.run(run(args.url, report))
    except BaseException as error:  # connection failures, ExceptionGroups from anyio
        if isinstance(error, KeyboardInterrupt):
            raise
        report["failures"].append({"uri": None, "error": error_text(error)})
    sys.stdout.write(json.dumps(report) + "\n")
    sys.stdout.flush()
    return 1 if report["failures"] or report["refused"] else 0


if __name__ == "__main__":
    sys.exit(main())
