"""Calls `diag.sleep` (60 s) with the official Python MCP SDK and waits for
it, so the Rust test (tests/tests/mcp/client_killed.rs) can kill this client
with SIGKILL in the middle of the call. The handler writes `started` to
STARTED when it runs and `dropped` to MARKER if it is dropped.

usage: python_hang.py stdio MARKER STARTED NOTES_BINARY [ARGS...]
       python_hang.py http  MARKER STARTED URL
"""

import sys

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters


async def scenario(target, marker, started):
    async with Client(target) as client:
        await client.call_tool(
            "diag.sleep", {"ms": 60000, "marker": marker, "started": started}
        )


def main():
    mode, marker, started = sys.argv[1], sys.argv[2], sys.argv[3]
    if mode == "stdio":
        target = StdioServerParameters(
            command=sys.argv[4], args=sys.argv[5:], env={"NOTES_DIAGNOSTICS": "1"}
        )
    elif mode == "http":
        target = sys.argv[4]
    else:
        raise SystemExit(f"unknown mode {mode!r}: use stdio or http")
    anyio.run(scenario, target, marker, started)


if __name__ == "__main__":
    main()
