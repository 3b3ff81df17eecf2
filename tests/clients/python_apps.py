"""Reads an MCP App served by gonk-tools with the official Python SDK (`mcp`
on PyPI): the tool list (each tool's `_meta`), the app resource the first
linked tool names in `_meta.ui.resourceUri` (listed and read: MIME type and
`_meta.ui`), and the `ui.supported` tool's answer. With `ui`, the client
declares the MCP Apps extension (`io.modelcontextprotocol/ui` with
`text/html;profile=mcp-app`) through the SDK's own `advertise`. The script
checks nothing itself: it prints what it observed as one JSON object on
stdout for the Rust test (tests/tests/mcp/apps.rs) to judge.

usage: python_apps.py MODE URL [ui]     (MODE: auto = 2026-07-28, legacy = 2025)
"""

import json
import sys
import warnings

import anyio
from mcp import Client
from mcp.client.extension import advertise

warnings.simplefilter("ignore")

EXTENSION = "io.modelcontextprotocol/ui"
MIME_TYPE = "text/html;profile=mcp-app"


def wire(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def scenario(mode, url, declare):
    report = {}
    extensions = [advertise(EXTENSION, {"mimeTypes": [MIME_TYPE]})] if declare else None
    async with Client(url, mode=mode, cache=None, extensions=extensions) as client:
        report["protocol_version"] = client.protocol_version
        capabilities = client.server_capabilities
        report["extension"] = (capabilities.extensions or {}).get(EXTENSION)
        tools = [wire(t) for t in (await client.list_tools()).tools]
        report["tools"] = tools
        linked = next(t for t in tools if "ui" in (t.get("_meta") or {}))
        uri = linked["_meta"]["ui"]["resourceUri"]
        report["linked_uri"] = uri
        report["resources"] = [wire(r) for r in (await client.list_resources()).resources]
        report["read"] = wire(await client.read_resource(uri))
        answer = await client.call_tool("ui.supported", {})
        report["ui_supported"] = wire(answer)
    print(json.dumps(report))


if __name__ == "__main__":
    anyio.run(scenario, sys.argv[1], sys.argv[2], len(sys.argv) > 3 and sys.argv[3] == "ui")
