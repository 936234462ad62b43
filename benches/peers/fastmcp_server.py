#!/usr/bin/env python3
"""Benchmark peer: FastMCP 4.1.6's skills provider serving a directory over Streamable HTTP.

Run with the venv Python that scripts/install-test-tools.sh creates ($SKILLREG_PYTHON):

    $SKILLREG_PYTHON benches/peers/fastmcp_server.py --dir DIR --port PORT [--page-size 100]

Wiring: `SkillsDirectoryProvider(DIR, experimental_skills=True)` (the SEP-2640 mode: strict
manifests, live byte-preserving reads) registered on a `FastMCP` server, plus the
`SkillsExtension` over that provider, which adds `skills/list` and `skills/get` (FastMCP binds
them to the 2026-07-28 protocol only). Supporting files are served through the provider's
`skill://{name}/{path*}` template. Cache hints: ttl 60 s, public (the same as skillreg and the
TS reference server). HTTP: FastMCP's default Streamable HTTP app under uvicorn (sessions on
for 2025-11-25, JSON or SSE as FastMCP chooses).

Prints "listening http://127.0.0.1:PORT/mcp" on stdout once the socket is bound (requests
queue until uvicorn starts accepting). Logs go to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import socket
import sys


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--page-size", type=int, default=100)
    args = parser.parse_args()

    from fastmcp import FastMCP
    from fastmcp.server.providers.skills import SkillsDirectoryProvider
    from fastmcp.skills.extension import SkillsExtension

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)

    mcp = FastMCP(
        "fastmcp-skills-bench",
        list_page_size=args.page_size,
        cache_ttl=60,
        cache_scope="public",
    )
    provider = SkillsDirectoryProvider(roots=args.dir, experimental_skills=True)
    mcp.add_provider(provider)
    mcp.add_extension(SkillsExtension(providers=[provider]))

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((args.host, args.port))
    sock.listen(1024)
    port = sock.getsockname()[1]
    print(f"listening http://{args.host}:{port}/mcp", flush=True)

    asyncio.run(
        mcp.run_http_async(
            show_banner=False,
            transport="http",
            host=args.host,
            port=port,
            log_level="warning",
            sockets=[sock],
        )
    )


if __name__ == "__main__":
    main()
