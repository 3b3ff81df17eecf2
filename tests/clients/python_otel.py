"""Calls the notes MCP server over streamable HTTP with the official Python
SDK, each `tools/call` carrying a W3C `traceparent` in its `_meta`; prints
what it got as one JSON object. The Rust test (tests/tests/mcp/otel.rs)
checks what the OTLP receiver got.

usage: python_otel.py URL SECRET TRACEPARENT_OK TRACEPARENT_FAIL
"""

import json
import sys

import anyio
from mcp import Client


def wire(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def scenario(url, secret, ok, fail):
    async with Client(url) as client:
        report = {"protocol_version": client.protocol_version}
        # The secret is input, which must never become an attribute.
        report["create"] = wire(
            await client.call_tool(
                "notes.create",
                {"title": "Launch codes", "body": secret, "tags": ["ops"]},
                meta={"traceparent": ok},
            )
        )
        report["search"] = wire(
            await client.call_tool("notes.search", {"query": secret}, meta={"traceparent": ok})
        )
        # An empty query breaks the schema's minLength: an isError result.
        report["failed"] = wire(
            await client.call_tool("notes.search", {"query": ""}, meta={"traceparent": fail})
        )
        return report


if __name__ == "__main__":
    report = anyio.run(scenario, *sys.argv[1:5])
    json.dump(report, sys.stdout)
    sys.stdout.write("\n")
