#!/usr/bin/env python3
"""FastMCP 4.2's skills proxy in front of a SEP-2640 server (fastmcp==4.2.3).

Run it with the venv Python that scripts/install-test-tools.sh creates
($SKILLREG_PYTHON_FASTMCP42 in <tools>/env.sh):

    $SKILLREG_PYTHON_FASTMCP42 tests/clients/fastmcp42_proxy.py --url http://127.0.0.1:PORT/mcp \
        [--token TOKEN] [--page-size N]

Builds a FastMCP server whose one provider is
`ProxyProvider(lambda: ProxyClient(url, auth=TOKEN), skills=True)`: the proxy
walks the upstream's `skills/list` pages to the end and re-serves each entry
whose every file it can route to the upstream's resources (it drops `dynamic`
entries and any it cannot route). The upstream connection carries
`Authorization: Bearer TOKEN` when --token is given, and no credentials
otherwise. The proxy serves its own pages of --page-size entries
(FastMCP's `list_page_size`; default: one page).

A FastMCP `Client(proxy, extensions=[SkillsClientExtension()])` connected to the
proxy server object in process then lists every skill through the proxy page by
page (`list_skills_mcp`, following `next_cursor`), and for every listed skill
reads its SKILL.md through the proxy (`read_resource`).

Prints ONE JSON object on stdout:
    {era, pages, pageSizes, skills: [entry as the proxy serves it (camelCase JSON)],
     skillMd: [{uri, size, sha256}], failures: [{uri, error}]}
sha256 is lowercase hex of the bytes read. Exit code 0 without failures, 1
otherwise, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import hashlib
import json
import logging
import sys
from typing import Any

MAX_PAGES = 250


def error_text(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}".strip()


def content_bytes(content: Any) -> bytes:
    text = getattr(content, "text", None)
    if text is not None:
        return text.encode("utf-8")
    return base64.b64decode(content.blob, validate=True)


async def run(args: argparse.Namespace, report: dict[str, Any]) -> None:
    from fastmcp import Client, FastMCP
    from fastmcp.server.providers.proxy import ProxyClient, ProxyProvider
    from fastmcp.skills.client import SkillsClientExtension

    def upstream() -> ProxyClient:
        return ProxyClient(args.url, auth=args.token)

    proxy = FastMCP("skillreg-proxy", list_page_size=args.page_size)
    proxy.add_provider(ProxyProvider(upstream, skills=True))

    failures: list[dict[str, Any]] = report["failures"]
    client = Client(proxy, extensions=[SkillsClientExtension()])
    async with client:
        report["era"] = client.protocol_version
        listed = []
        cursor: str | None = None
        seen_cursors: set[str] = set()
        while True:
            if report["pages"] >= MAX_PAGES:
                failures.append({"uri": None, "error": f"skills/list did not end within {MAX_PAGES} pages"})
                break
            page = await client.list_skills_mcp(cursor=cursor, cache_mode="bypass")
            report["pages"] += 1
            report["pageSizes"].append(len(page.skills))
            listed.extend(page.skills)
            if not page.next_cursor:
                break
            if page.next_cursor in seen_cursors:
                failures.append({"uri": None, "error": f"skills/list repeated cursor {page.next_cursor!r}"})
                break
            seen_cursors.add(page.next_cursor)
            cursor = page.next_cursor

        for entry in listed:
            report["skills"].append(entry.model_dump(mode="json", by_alias=True, exclude_none=True))
            try:
                contents = await client.read_resource(entry.uri)
                if len(contents) != 1:
                    raise ValueError(f"{len(contents)} contents")
                data = content_bytes(contents[0])
            except Exception as error:
                failures.append({"uri": entry.uri, "error": f"resources/read: {error_text(error)}"})
                continue
            report["skillMd"].append(
                {"uri": entry.uri, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
            )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True, help="the upstream's Streamable HTTP endpoint")
    parser.add_argument("--token", help="bearer token of the proxy's upstream connection")
    parser.add_argument("--page-size", type=int, help="skills per page the proxy serves")
    args = parser.parse_args()
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    report: dict[str, Any] = {"era": None, "pages": 0, "pageSizes": [], "skills": [], "skillMd": [], "failures": []}
    try:
        asyncio.run(run(args, report))
    except BaseException as error:  # connection failures, ExceptionGroups from anyio
        if isinstance(error, KeyboardInterrupt):
            raise
        report["failures"].append({"uri": None, "error": error_text(error)})
    sys.stdout.write(json.dumps(report) + "\n")
    sys.stdout.flush()
    return 1 if report["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
