"""Drives `gonk-gateway serve` in front of the FastAPI todo API
(todo_api.py) with the official Python SDK (`mcp` on PyPI), as a client
whose writes are asked first (`--approval ask`, or a caller whose config
says `ask`): lists the tools, then creates, reads, lists,
fails to read, crashes and deletes through them, accepting each approval
question and noting which call asked. Prints one JSON object; the Rust test
(tests/tests/openapi/fastapi.rs) asserts.

usage: python_openapi.py URL API_KEY
"""

import json
import sys

import anyio
import httpx2
import mcp.types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


def wire(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def main():
    url, key = sys.argv[1], sys.argv[2]
    asked = []

    async def elicit(context, params):
        asked.append(wire(params))
        return types.ElicitResult(action="accept", content={"approve": True})

    headers = {"Authorization": f"Bearer {key}"}
    report = {"calls": [], "asked_by": []}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300)) as http:
        async with Client(streamable_http_client(url, http_client=http), elicitation_callback=elicit) as client:
            report["tools"] = [wire(t) for t in (await client.list_tools()).tools]

            async def call(name, arguments):
                before = len(asked)
                result = wire(await client.call_tool(name, arguments))
                report["calls"].append({"name": name, "arguments": arguments, "result": result})
                if len(asked) > before:
                    report["asked_by"].append(name)
                return result

            made = await call("todo.create_todo", {"title": "buy milk"})
            assert "id" in (made.get("structuredContent") or {}), f"create answered {made}"
            todo_id = made["structuredContent"]["id"]
            await call("todo.get_todo", {"todo_id": todo_id})
            await call("todo.list_todos", {"limit": 5})
            await call("todo.get_todo", {"todo_id": 999})
            await call("todo.crash", {})
            await call("todo.delete_todo", {"todo_id": todo_id})
            await call("todo.get_todo", {"todo_id": todo_id})
    report["asked"] = asked
    return report


if __name__ == "__main__":
    report = anyio.run(main)
    json.dump(report, sys.stdout)
    sys.stdout.write("\n")
