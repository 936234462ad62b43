"""Browse a skills server with FastMCP 4.1.6: resource templates, completion, the search_skills
tool, skill://index.json, and FastMCP's own get_skill_manifest() on skill://<ns>/<name>/_manifest.
Prints one JSON object; the Rust test asserts on it.

    $SKILLREG_PYTHON tests/clients/fastmcp_browse.py --url URL --namespace NS --name NAME --query TEXT
"""

from __future__ import annotations

import argparse
import asyncio
import json

from fastmcp import Client
from fastmcp.utilities.skills import get_skill_manifest
from mcp_types import ResourceTemplateReference


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--namespace", required=True)
    parser.add_argument("--name", required=True)
    parser.add_argument("--query", required=True)
    args = parser.parse_args()
    report: dict = {}
    async with Client(args.url) as client:
        templates = await client.list_resource_templates()
        report["templates"] = [t.uri_template for t in templates]
        skill_template = next(t for t in report["templates"] if t.endswith("/{name}/SKILL.md") and "@" not in t)
        ref = ResourceTemplateReference(type="ref/resource", uri=skill_template)
        ns = await client.complete(ref, {"name": "namespace", "value": args.namespace[:2]})
        name = await client.complete(
            ref, {"name": "name", "value": args.name[:3]}, context_arguments={"namespace": args.namespace}
        )
        report["completion"] = {
            "namespace": ns.model_dump(by_alias=True, exclude_none=True),
            "nameInNamespace": name.model_dump(by_alias=True, exclude_none=True),
        }
        result = await client.call_tool("search_skills", {"query": args.query, "limit": 5})
        report["search"] = result.structured_content
        index = await client.read_resource("skill://index.json")
        report["index"] = json.loads(index[0].text)
        manifest = await get_skill_manifest(client, f"{args.namespace}/{args.name}")
        report["manifest"] = {"skill": manifest.name, "files": [{"path": f.path, "size": f.size, "hash": f.hash} for f in manifest.files]}
    print(json.dumps(report))


if __name__ == "__main__":
    asyncio.run(main())
