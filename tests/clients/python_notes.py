"""Drives the notes MCP server with the official Python SDK (`mcp` on PyPI)
and prints what it observed as one JSON object on stdout. The Rust test
(tests/tests/mcp/notes_clients.rs) makes the assertions.

usage: python_notes.py stdio MARKER NOTES_BINARY [ARGS...]
       python_notes.py http  MARKER URL
"""

import json
import sys
import time

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters


def wire(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def scenario(target, marker):
    report = {}
    progress = []
    logs = []

    async def on_log(params):
        logs.append(wire(params))

    # `log_level` opts every request of the stateless era (2026-07-28) in to
    # log notifications; a 2025 session asks with logging/setLevel below.
    async with Client(target, logging_callback=on_log, log_level="info") as client:
        report["protocol_version"] = client.protocol_version
        report["server"] = wire(client.server_info) if client.server_info else None
        tools = await client.list_tools()
        report["tools"] = [wire(t) for t in tools.tools]

        created = await client.call_tool(
            "notes.create",
            {"title": "Release checklist", "body": "- tag v1", "tags": ["release"]},
        )
        report["create"] = wire(created)
        await client.call_tool("notes.create", {"title": "Rust ownership", "tags": ["rust"]})
        report["search"] = wire(await client.call_tool("notes.search", {"query": "release"}))
        report["search_empty"] = wire(await client.call_tool("notes.search", {"query": ""}))
        report["get_missing"] = wire(await client.call_tool("notes.get", {"id": 999}))
        report["unknown"] = wire(await client.call_tool("no.such.tool", {}))
        report["duplex"] = wire(await client.call_tool("diag.duplex", {}))

        async def on_progress(value, total, message):
            progress.append({"progress": value, "total": total, "message": message})

        report["export"] = wire(
            await client.call_tool("notes.export", {"format": "json"}, progress_callback=on_progress)
        )
        report["progress"] = list(progress)

        # Cancellation: start a long call, wait until the handler runs (its
        # first log line arrives), then cancel the awaiting task. The SDK sends
        # notifications/cancelled; the server must drop the handler, which
        # writes "dropped" to the marker file.
        if client.protocol_version < "2026-07-28":
            await client.set_logging_level("info")
        logs.clear()
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as tg:
                async def long_call():
                    await client.call_tool("diag.sleep", {"ms": 60000, "marker": marker})

                tg.start_soon(long_call)
                deadline = time.monotonic() + 20
                while not any("sleeping" in json.dumps(l) for l in logs):
                    if time.monotonic() > deadline:
                        report["cancel_error"] = "the sleep handler never logged that it started"
                        break
                    await anyio.sleep(0.02)
                scope.cancel()
        report["cancel_logs"] = list(logs)
        # The session keeps working after the cancellation.
        report["after_cancel"] = wire(await client.call_tool("notes.search", {"query": "release"}))
    return report


def main():
    mode, marker = sys.argv[1], sys.argv[2]
    if mode == "stdio":
        target = StdioServerParameters(command=sys.argv[3], args=sys.argv[4:], env={})
    elif mode == "http":
        target = sys.argv[3]
    else:
        raise SystemExit(f"unknown mode {mode!r}: use stdio or http")
    report = anyio.run(scenario, target, marker)
    json.dump(report, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
