"""Lists the tools of an MCP server started as a command (stdio) with the
Python SDK, then calls each named tool with {"text": "hi"}; prints what it
saw as one JSON object.

usage: python_list_call.py TOOL[,TOOL...] COMMAND [ARGS...]
"""

import json
import sys

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters


def wire(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def scenario(names, command, args):
    target = StdioServerParameters(command=command, args=args)
    async with Client(target) as client:
        tools = await client.list_tools()
        calls = {}
        for name in names:
            calls[name] = wire(await client.call_tool(name, {"text": "hi"}))
        return {"tools": [t.name for t in tools.tools], "calls": calls}


if __name__ == "__main__":
    names = [n for n in sys.argv[1].split(",") if n]
    report = anyio.run(scenario, names, sys.argv[2], sys.argv[3:])
    json.dump(report, sys.stdout)
    sys.stdout.write("\n")
