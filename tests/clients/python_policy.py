"""Lists the tools of an MCP server over streamable HTTP with the Python SDK
and tries to call notes.create; prints what it saw as JSON.

usage: python_policy.py URL
"""

import json
import sys

import anyio
from mcp import Client


async def scenario(url):
    async with Client(url) as client:
        tools = await client.list_tools()
        created = await client.call_tool("notes.create", {"title": "withheld?"})
        return {
            "tools": [t.name for t in tools.tools],
            "create": created.model_dump(mode="json", by_alias=True, exclude_none=True),
        }


if __name__ == "__main__":
    json.dump(anyio.run(scenario, sys.argv[1]), sys.stdout)
    sys.stdout.write("\n")
