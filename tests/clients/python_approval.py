"""Drives `notes serve --approval ask` / `notes mcp --approval ask` with the
official Python SDK (`mcp` 2.x on PyPI) and an elicitation callback that
answers the approval question as told, then prints one JSON object: the era
the client negotiated, the questions it was asked, the create result (or the
error the SDK raised) and what a search finds afterwards. The Rust test
(tests/tests/mcp/approval_ask.rs) asserts.

usage: python_approval.py ERA ANSWER stdio NOTES_BINARY [ARGS...]
       python_approval.py ERA ANSWER http  URL
  ERA     auto (2026-07-28, discover) | legacy (2025 initialize session)
  ANSWER  accept (approve: true) | decline | hang (never answers) | none (no
          elicitation callback: the client declares no elicitation capability)
"""

import json
import sys

import anyio
import httpx2
import mcp.types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client


def wire(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def scenario(target, era, answer):
    asked = []

    async def elicit(context, params):
        asked.append(wire(params))
        if answer == "accept":
            return types.ElicitResult(action="accept", content={"approve": True})
        if answer == "hang":
            await anyio.sleep(3600)
        return types.ElicitResult(action="decline")

    kwargs = {"mode": era}
    if answer != "none":
        kwargs["elicitation_callback"] = elicit
    report = {"asked": asked}
    async with Client(target, **kwargs) as client:
        report["protocol_version"] = client.protocol_version
        try:
            report["create"] = wire(
                await client.call_tool(
                    "notes.create", {"title": "Approved note", "body": "asked first"}
                )
            )
        except Exception as error:  # the SDK raises on a protocol error
            report["create_error"] = f"{type(error).__name__}: {error}"
        report["search"] = wire(await client.call_tool("notes.search", {"query": "Approved"}))
    return report


async def main():
    era, answer, transport = sys.argv[1], sys.argv[2], sys.argv[3]
    if transport == "stdio":
        target = StdioServerParameters(command=sys.argv[4], args=sys.argv[5:], env={"USER": "tester"})
        return await scenario(target, era, answer)
    if transport == "http":
        async with httpx2.AsyncClient(timeout=httpx2.Timeout(30, read=300)) as http:
            return await scenario(streamable_http_client(sys.argv[4], http_client=http), era, answer)
    raise SystemExit(f"unknown transport {transport!r}: use stdio or http")


if __name__ == "__main__":
    report = anyio.run(main)
    json.dump(report, sys.stdout)
    sys.stdout.write("\n")
