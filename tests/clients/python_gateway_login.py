"""The official Python SDK (`mcp` on PyPI) calling gonk-gateway, whose
upstream behind OAuth has no token yet: `gateway.login` asks this client to
open the upstream's authorization page (URL-mode elicitation). The
elicitation callback plays the person (oauth_browser.py signs in as
ACCOUNT and allows the consent form) and opens the page the authorization
server then sends the browser to — the gateway's loopback callback — then
answers `accept`. Then the upstream's tools are listed and called (the
gateway names them `notes.<tool>`: `notes.notes.create`). Prints
what it saw as one JSON object; the Rust test
(tests/tests/gateway/oauth_e2e.rs) makes the assertions.

usage: python_gateway_login.py URL API_KEY ACCOUNT TITLE
"""

import json
import sys

import anyio
import httpx2
import mcp.types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from oauth_browser import browse


def wire(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def main():
    url, key, account, title = sys.argv[1:5]
    asked = []
    callbacks = []

    async def elicit(context, params):
        asked.append(wire(params))
        if getattr(params, "mode", None) != "url":
            return types.ElicitResult(action="decline")
        back = await browse(params.url, account)
        async with httpx2.AsyncClient(timeout=30) as browser:
            page = await browser.get(back)
        callbacks.append({"url": back, "status": page.status_code, "page": page.text})
        return types.ElicitResult(action="accept")

    headers = {"Authorization": f"Bearer {key}"}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300)) as http:
        async with Client(streamable_http_client(url, http_client=http), elicitation_callback=elicit) as client:
            before = [t.name for t in (await client.list_tools()).tools]
            login = wire(await client.call_tool("gateway.login", {"server": "notes"}))
            after = [t.name for t in (await client.list_tools()).tools]
            created = wire(await client.call_tool("notes.notes.create", {"title": title, "body": "through the gateway"}))
            found = wire(await client.call_tool("notes.notes.search", {"query": title}))
            return {
                "protocol_version": client.protocol_version,
                "asked": asked,
                "callbacks": callbacks,
                "before": before,
                "login": login,
                "after": after,
                "created": created,
                "found": found,
            }


if __name__ == "__main__":
    report = anyio.run(main)
    json.dump(report, sys.stdout)
    sys.stdout.write("\n")
