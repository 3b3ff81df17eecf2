"""Drives three `notes serve` replicas behind HAProxy with the official
Python SDK (`mcp` 2.x, the 2026-07-28 stateless era) and prints one JSON
object on stdout: what it created, the search and export results, and for
every HTTP exchange the JSON-RPC method sent and the `x-notes-replica`
header of the answer (which replica took it). The Rust test
(tests/tests/deploy/balancer.rs) makes the assertions.

usage: python_deploy.py URL TAG COUNT
"""

import json
import sys

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


def wire(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


class Recorder:
    """httpx2 event hooks noting each answer's method and replica, in order."""

    def __init__(self):
        self.exchanges = []

    async def on_response(self, response):
        request = response.request
        try:
            body = json.loads(request.content) if request.content else None
        except ValueError:
            body = None
        self.exchanges.append(
            {
                "http": request.method,
                "method": body.get("method") if isinstance(body, dict) else None,
                "status": response.status_code,
                "replica": response.headers.get("x-notes-replica"),
            }
        )


async def scenario(url, tag, count, recorder):
    report = {"created": []}
    hooks = {"response": [recorder.on_response]}
    async with httpx2.AsyncClient(event_hooks=hooks, timeout=httpx2.Timeout(30, read=120)) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            report["protocol_version"] = client.protocol_version
            for i in range(count):
                title = f"{tag} note {i}"
                result = await client.call_tool(
                    "notes.create", {"title": title, "body": f"written through the balancer ({tag})", "tags": [tag]}
                )
                report["created"].append(wire(result))
            report["search"] = wire(await client.call_tool("notes.search", {"query": tag, "limit": 20}))
            report["export"] = wire(await client.call_tool("notes.export", {"format": "json"}))
    report["exchanges"] = recorder.exchanges
    return report


async def main():
    url, tag, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    return await scenario(url, tag, count, Recorder())


if __name__ == "__main__":
    report = anyio.run(main)
    json.dump(report, sys.stdout)
    sys.stdout.write("\n")
