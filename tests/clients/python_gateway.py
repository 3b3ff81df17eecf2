"""Lists the tools of an MCP server over streamable HTTP with a bearer key
(the official Python SDK, `mcp` on PyPI) and calls the named tools; prints
what it saw as one JSON object. The Rust test
(tests/tests/gateway/upstreams.rs) makes the assertions.

usage: python_gateway.py URL API_KEY '{"tool": {arguments}, ...}'
"""

import json
import sys

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


def wire(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def main():
    url, key, calls = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    headers = {"Authorization": f"Bearer {key}"}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300)) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            tools = await client.list_tools()
            results = {}
            for name, arguments in calls.items():
                results[name] = wire(await client.call_tool(name, arguments))
            return {
                "protocol_version": client.protocol_version,
                "tools": [wire(t) for t in tools.tools],
                "calls": results,
            }


if __name__ == "__main__":
    report = anyio.run(main)
    json.dump(report, sys.stdout)
    sys.stdout.write("\n")
