"""Two replicas of `notes serve` and the official Python SDK (`mcp` on
PyPI): connection B, on replica B, creates a note; connection A, on replica A,
watches it; B renames it. Prints what A heard as one JSON object on stdout;
the Rust tests (tests/tests/deploy/notifications.rs, outage.rs) make the assertions.

usage: python_listen_across.py MODE URL_A URL_B SECONDS [BEARER]
       (MODE: auto = 2026-07-28 `subscriptions/listen`,
              legacy = 2025 `resources/subscribe`)
With BEARER, every request carries `Authorization: Bearer BEARER`, and
B's connections approve the writes they are asked about.
"""

import json
import sys
import warnings

import anyio
import httpx2
import mcp.types as types
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp.client.streamable_http import streamable_http_client

warnings.simplefilter("ignore")


async def scenario(mode, url_a, url_b, seconds, bearer):
    headers = {"Authorization": f"Bearer {bearer}"} if bearer else {}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=120)) as http:
        return await scenario_over(http, mode, url_a, url_b, seconds)


async def scenario_over(http, mode, url_a, url_b, seconds):
    updates = []

    def server(url):
        return streamable_http_client(url, http_client=http)

    async def approve(context, params):
        return types.ElicitResult(action="accept", content={"approve": True})

    # An authenticated write asks for approval; B's connections give it.
    writer = {"elicitation_callback": approve}

    async def on_message(message):
        root = getattr(message, "root", message)
        if getattr(root, "method", None) == "notifications/resources/updated":
            updates.append(root.params.uri)

    async with Client(server(url_b), mode=mode, cache=None, **writer) as b:
        try:
            created = await b.call_tool(
                "notes.create", {"title": "Shared", "body": "on both replicas"}
            )
        except MCPError as error:  # e.g. an approval's retry refused
            return {"write_error": str(error), "updates": []}
    if created.is_error:
        raise SystemExit(f"notes.create failed on B: {created.content}")
    note = created.structured_content["id"]
    uri = f"notes://{note}"

    async def rename():
        async with Client(server(url_b), mode=mode, cache=None, **writer) as b:
            await b.call_tool("notes.rename", {"id": note, "title": "Renamed on B"})

    async with Client(server(url_a), mode=mode, message_handler=on_message, cache=None) as a:
        if mode == "legacy":
            await a.subscribe_resource(uri)
            await rename()
            with anyio.move_on_after(seconds):
                while not updates:
                    await anyio.sleep(0.05)
        else:
            async with a.listen(resource_subscriptions=[uri]) as sub:
                await rename()
                with anyio.move_on_after(seconds):
                    async for event in sub:
                        updates.append(repr(event))
                        break
        read = await a.read_resource(uri)
    return {"note": uri, "updates": updates, "title_on_a": read.contents[0].text.splitlines()[0]}


def main():
    mode, url_a, url_b, seconds = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    bearer = sys.argv[5] if len(sys.argv) > 5 else None
    print(json.dumps(anyio.run(scenario, mode, url_a, url_b, seconds, bearer)))


if __name__ == "__main__":
    main()
