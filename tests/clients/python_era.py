"""Drives the notes MCP server with the official Python SDK (`mcp` 2.x on
PyPI) in its default connect mode and prints what it observed as one JSON
object on stdout: the protocol version the client negotiated, how it got
there (a `server/discover` result or an `initialize` result), and over HTTP
every request it put on the wire (JSON-RPC method and MCP headers) and
every session id the server handed back. The Rust test
(tests/tests/mcp_era_clients.rs) makes the assertions.

usage: python_era.py stdio NOTES_BINARY [ARGS...]
       python_era.py http  URL
"""

import json
import sys

import anyio
import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client


def wire(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


class Recorder:
    """httpx2 event hooks that note each request and answer as sent."""

    def __init__(self):
        self.requests = []
        self.session_ids = []

    async def on_request(self, request):
        try:
            body = json.loads(request.content) if request.content else None
        except ValueError:
            body = None
        self.requests.append(
            {
                "http": request.method,
                "method": body.get("method") if isinstance(body, dict) else None,
                "meta": ((body.get("params") or {}).get("_meta")) if isinstance(body, dict) else None,
                "headers": {
                    name: request.headers.get(name)
                    for name in ("mcp-protocol-version", "mcp-method", "mcp-name", "mcp-session-id")
                    if request.headers.get(name) is not None
                },
            }
        )

    async def on_response(self, response):
        session = response.headers.get("mcp-session-id")
        if session is not None:
            self.session_ids.append(session)


async def scenario(target, recorder):
    report = {}
    async with Client(target) as client:
        session = client.session
        report["protocol_version"] = client.protocol_version
        report["via"] = (
            "discover"
            if session.discover_result is not None
            else "initialize" if session.initialize_result is not None else None
        )
        if session.discover_result is not None:
            report["supported_versions"] = session.discover_result.supported_versions
        report["server"] = wire(client.server_info) if client.server_info else None
        report["tools"] = [t.name for t in (await client.list_tools()).tools]
        report["create"] = wire(
            await client.call_tool(
                "notes.create",
                {"title": "Release checklist", "body": "- tag v1", "tags": ["release"]},
            )
        )
        report["search"] = wire(await client.call_tool("notes.search", {"query": "release"}))
        report["get_missing"] = wire(await client.call_tool("notes.get", {"id": 999}))
    if recorder is not None:
        report["wire"] = recorder.requests
        report["session_ids"] = recorder.session_ids
    return report


async def main():
    mode = sys.argv[1]
    if mode == "stdio":
        target = StdioServerParameters(command=sys.argv[2], args=sys.argv[3:], env={})
        return await scenario(target, None)
    if mode == "http":
        recorder = Recorder()
        hooks = {"request": [recorder.on_request], "response": [recorder.on_response]}
        async with httpx2.AsyncClient(event_hooks=hooks, timeout=httpx2.Timeout(30, read=300)) as http:
            transport = streamable_http_client(sys.argv[2], http_client=http)
            return await scenario(transport, recorder)
    raise SystemExit(f"unknown mode {mode!r}: use stdio or http")


if __name__ == "__main__":
    report = anyio.run(main)
    json.dump(report, sys.stdout)
    sys.stdout.write("\n")
