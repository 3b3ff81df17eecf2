"""Drives `notes serve` with the official Python SDK (`mcp` on PyPI) through
resources, prompts and completion, and prints what it observed as one JSON
object on stdout. The Rust test (tests/tests/mcp/notes_resources.rs) makes
the assertions.

usage: python_resources.py MODE URL     (MODE: auto = 2026-07-28, legacy = 2025)

It also reads the notes board, the MCP App `ui://notes/board`.

Two connections: A reads, gets, completes and watches `notes://1`; B renames
note 1. In the 2026 era A watches with `subscriptions/listen`, in 2025 with
`resources/subscribe` and the `notifications/resources/updated` it gets.
"""

import json
import sys
import warnings

import anyio
from mcp import Client
from mcp.types import PromptReference, ResourceTemplateReference

warnings.simplefilter("ignore")


def wire(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def scenario(mode, url):
    report = {}
    updates = []

    async def on_message(message):
        # 2025: notifications arrive on the session.
        root = getattr(message, "root", message)
        method = getattr(root, "method", None)
        if method == "notifications/resources/updated":
            updates.append(wire(root.params))

    async with Client(url, mode=mode, message_handler=on_message, cache=None) as a:
        report["protocol_version"] = a.protocol_version
        await a.call_tool(
            "notes.create",
            {"title": "Release checklist", "body": "- tag v1", "tags": ["release", "rust"]},
        )
        await a.call_tool("notes.create", {"title": "Recipes", "tags": ["cooking"]})
        report["resources"] = [wire(r) for r in (await a.list_resources()).resources]
        report["templates"] = [wire(t) for t in (await a.list_resource_templates()).resource_templates]
        report["read"] = wire(await a.read_resource("notes://1"))
        report["recent"] = wire(await a.read_resource("notes://recent"))
        report["app"] = wire(await a.read_resource("ui://notes/board"))
        try:
            await a.read_resource("notes://999")
            report["read_missing"] = "no error"
        except Exception as error:
            report["read_missing"] = {"type": type(error).__name__, "text": str(error)}
        report["prompts"] = [wire(p) for p in (await a.list_prompts()).prompts]
        report["prompt"] = wire(await a.get_prompt("summarize", {"id": "1", "style": "bullets"}))
        report["complete_tag"] = wire(
            await a.complete(ResourceTemplateReference(type="ref/resource", uri="notes://tag/{tag}"), {"name": "tag", "value": "re"})
        )
        report["complete_id"] = wire(
            await a.complete(PromptReference(type="ref/prompt", name="summarize"), {"name": "id", "value": ""})
        )

        async def rename():
            async with Client(url, mode=mode, cache=None) as b:
                await b.call_tool("notes.rename", {"id": 1, "title": "Release checklist v2"})
                await b.call_tool("notes.rename", {"id": 2, "title": "Recipes v2"})

        if mode == "legacy":
            await a.subscribe_resource("notes://1")
            await rename()
            with anyio.move_on_after(10):
                while not updates:
                    await anyio.sleep(0.05)
            report["updates"] = updates
        else:
            events = []
            async with a.listen(resource_subscriptions=["notes://1"]) as sub:
                report["honored"] = str(sub.honored) if hasattr(sub, "honored") else None
                await rename()
                with anyio.move_on_after(10):
                    async for event in sub:
                        events.append(repr(event))
                        break
            report["updates"] = events
        report["read_after"] = wire(await a.read_resource("notes://1"))
    return report


def main():
    mode, url = sys.argv[1], sys.argv[2]
    print(json.dumps(anyio.run(scenario, mode, url)))


if __name__ == "__main__":
    main()
