"""Two replicas of `notes serve` and the official Python SDK (`mcp` on
PyPI): connection A, on replica A, watches `notes://1`; connection B, on
replica B, renames note 1. Prints what A heard as one JSON object on stdout;
the Rust test (tests/tests/mcp/notes_replicas.rs) makes the assertions.

usage: python_listen_across.py MODE URL_A URL_B SECONDS
       (MODE: auto = 2026-07-28 `subscriptions/listen`,
              legacy = 2025 `resources/subscribe`)
"""

import json
import sys
import warnings

import anyio
from mcp import Client

warnings.simplefilter("ignore")


async def scenario(mode, url_a, url_b, seconds):
    updates = []

    async def on_message(message):
        root = getattr(message, "root", message)
        if getattr(root, "method", None) == "notifications/resources/updated":
            updates.append(root.params.uri)

    async with Client(url_b, mode=mode, cache=None) as b:
        await b.call_tool("notes.create", {"title": "Shared", "body": "on both replicas"})

    async def rename():
        async with Client(url_b, mode=mode, cache=None) as b:
            await b.call_tool("notes.rename", {"id": 1, "title": "Renamed on B"})

    async with Client(url_a, mode=mode, message_handler=on_message, cache=None) as a:
        if mode == "legacy":
            await a.subscribe_resource("notes://1")
            await rename()
            with anyio.move_on_after(seconds):
                while not updates:
                    await anyio.sleep(0.05)
        else:
            async with a.listen(resource_subscriptions=["notes://1"]) as sub:
                await rename()
                with anyio.move_on_after(seconds):
                    async for event in sub:
                        updates.append(repr(event))
                        break
        read = await a.read_resource("notes://1")
    return {"updates": updates, "title_on_a": read.contents[0].text.splitlines()[0]}


def main():
    mode, url_a, url_b, seconds = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    print(json.dumps(anyio.run(scenario, mode, url_a, url_b, seconds)))


if __name__ == "__main__":
    main()
