#!/usr/bin/env python3
"""External SEP-2640 client check with FastMCP's skills client (fastmcp==4.1.6).

Run it with the venv Python that scripts/install-test-tools.sh creates
($SKILLREG_PYTHON in <tools>/env.sh):

    $SKILLREG_PYTHON tests/clients/fastmcp_skills.py --url http://127.0.0.1:PORT/mcp
    $SKILLREG_PYTHON tests/clients/fastmcp_skills.py --stdio CMD [ARGS...]   # everything after --stdio

Options: --mode auto|legacy (default auto; FastMCP's skills client refuses any
connection that did not negotiate 2026-07-28, so --mode legacy is expected to
fail with "requires a modern MCP connection"), --max-pages N (default 250).

With `Client(..., extensions=[SkillsClientExtension()])` it calls
`list_skills_mcp` page by page following `next_cursor` to the end (each page is
validated by pydantic: one bad entry rejects the whole page), `get_skill_mcp`
for every listed URI (the entry must echo the URI and equal the listed entry),
and `read_resource` for every file in every static manifest, checking the
received bytes' size and sha256 against the manifest. "dynamic" skills only
get their SKILL.md read (unchecked).

Prints ONE JSON object on stdout:
    {era, pages, pageSizes, skills: [uri], files: [{uri, size, sha256, encoding, mimeType}],
     failures: [{uri, error}], ttlMs, cacheScope}
sha256 is lowercase hex (no "sha256:" prefix) of the bytes received. Exit code
0 without failures, 1 otherwise, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import binascii
import hashlib
import json
import logging
import os
import sys
from typing import Any


def parse_args(argv: list[str]) -> argparse.Namespace:
    stdio: list[str] | None = None
    if "--stdio" in argv:
        at = argv.index("--stdio")
        argv, stdio = argv[:at], argv[at + 1 :]
        if not stdio:
            print("fastmcp_skills: --stdio needs a command", file=sys.stderr)
            sys.exit(2)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="Streamable HTTP endpoint, e.g. http://127.0.0.1:8080/mcp")
    parser.add_argument("--mode", choices=("auto", "legacy"), default="auto")
    parser.add_argument("--max-pages", type=int, default=250)
    args = parser.parse_args(argv)
    args.stdio = stdio
    if (args.url is None) == (stdio is None):
        parser.error("pass exactly one of --url URL, --stdio CMD [ARGS...]")
    return args


def error_text(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}".strip()


def content_bytes(content: Any) -> tuple[bytes, str]:
    text = getattr(content, "text", None)
    if text is not None:
        return text.encode("utf-8"), "text"
    return base64.b64decode(content.blob, validate=True), "blob"


async def run(args: argparse.Namespace, report: dict[str, Any]) -> None:
    from fastmcp import Client
    from fastmcp.skills import SkillsClientExtension

    if args.url is not None:
        target: Any = args.url
    else:
        from fastmcp.client.transports import StdioTransport

        # Pass the whole environment so the server under test sees SKILLREG_*, RUST_LOG, ...
        target = StdioTransport(args.stdio[0], args.stdio[1:], env=dict(os.environ))

    failures: list[dict[str, Any]] = report["failures"]
    client = Client(target, extensions=[SkillsClientExtension()], mode=args.mode)
    async with client:
        report["era"] = client.protocol_version

        listed = []
        cursor: str | None = None
        seen_cursors: set[str] = set()
        while True:
            if report["pages"] >= args.max_pages:
                failures.append({"uri": None, "error": f"skills/list did not end within {args.max_pages} pages"})
                break
            try:
                page = await client.list_skills_mcp(cursor=cursor, cache_mode="bypass")
            except Exception as error:  # a pydantic ValidationError here rejects the whole page
                failures.append({"uri": None, "error": f"skills/list (cursor={cursor!r}): {error_text(error)}"})
                break
            report["pages"] += 1
            report["pageSizes"].append(len(page.skills))
            if report["pages"] == 1:
                report["ttlMs"] = page.ttl_ms
                report["cacheScope"] = page.cache_scope
            listed.extend(page.skills)
            if not page.next_cursor:
                break
            if page.next_cursor in seen_cursors:
                failures.append({"uri": None, "error": f"skills/list repeated cursor {page.next_cursor!r}"})
                break
            seen_cursors.add(page.next_cursor)
            cursor = page.next_cursor

        seen_uris: set[str] = set()
        for skill in listed:
            report["skills"].append(skill.uri)
            if skill.uri in seen_uris:
                failures.append({"uri": skill.uri, "error": "listed more than once"})
            seen_uris.add(skill.uri)

            try:
                got = (await client.get_skill_mcp(skill.uri, cache_mode="bypass")).skill
                if got.uri != skill.uri:
                    failures.append({"uri": skill.uri, "error": f"skills/get returned {got.uri}"})
                elif got.model_dump(by_alias=True) != skill.model_dump(by_alias=True):
                    failures.append({"uri": skill.uri, "error": "skills/get entry differs from the skills/list entry"})
            except Exception as error:
                failures.append({"uri": skill.uri, "error": f"skills/get: {error_text(error)}"})

            if skill.resources == "dynamic":
                manifest: list[tuple[str, int | None, str | None]] = [(skill.uri, None, None)]
            else:
                manifest = [(entry.uri, entry.size, entry.digest) for entry in skill.resources]
            for uri, size, digest in manifest:
                try:
                    contents = await client.read_resource(uri)
                    matching = [item for item in contents if str(item.uri) == uri]
                    if not matching:
                        failures.append({"uri": uri, "error": f"resources/read returned no contents for this uri ({len(contents)} items)"})
                        continue
                    data, encoding = content_bytes(matching[0])
                except (Exception, binascii.Error) as error:
                    failures.append({"uri": uri, "error": f"resources/read: {error_text(error)}"})
                    continue
                hex_digest = hashlib.sha256(data).hexdigest()
                report["files"].append(
                    {
                        "uri": uri,
                        "size": len(data),
                        "sha256": hex_digest,
                        "encoding": encoding,
                        "mimeType": getattr(matching[0], "mime_type", None),
                    }
                )
                if size is not None and len(data) != size:
                    failures.append({"uri": uri, "error": f"size: read {len(data)} bytes, manifest lists {size}"})
                if digest is not None and f"sha256:{hex_digest}" != digest:
                    failures.append({"uri": uri, "error": f"digest: read sha256:{hex_digest}, manifest lists {digest}"})


def main() -> int:
    args = parse_args(sys.argv[1:])
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    report: dict[str, Any] = {
        "era": None,
        "pages": 0,
        "pageSizes": [],
        "skills": [],
        "files": [],
        "failures": [],
        "ttlMs": None,
        "cacheScope": None,
    }
    try:
        asyncio.run(run(args, report))
    except BaseException as error:  # connection failures, refused era, ExceptionGroups from anyio
        if isinstance(error, KeyboardInterrupt):
            raise
        report["failures"].append({"uri": None, "error": error_text(error)})
    sys.stdout.write(json.dumps(report) + "\n")
    sys.stdout.flush()
    return 1 if report["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
