"""Drives the notes WebSocket endpoint (`notes serve`, /ws) with the Python
`websockets` library (PyPI) and prints what it observed as one JSON object
on stdout. The Rust test (tests/tests/ws/notes_clients.rs) makes the
assertions.

usage: python_ws_notes.py WS_URL API_KEY MARKER_DIR
"""

import asyncio
import json
import os
import sys

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

WAIT = 30


async def recv_json(ws):
    return json.loads(await asyncio.wait_for(ws.recv(), WAIT))


async def reply_to(ws, req_id, events=None, others=None):
    """Reads until the reply to req_id; events and other messages are kept."""
    while True:
        message = await recv_json(ws)
        if message.get("type") == "event" and message.get("reqId") == req_id:
            if events is not None:
                events.append(message["event"])
        elif message.get("type") in ("result", "error") and message.get("reqId") == req_id:
            return message
        elif others is not None:
            others.append(message)


async def next_reply(ws):
    """The next result or error (for requests without a reqId)."""
    while True:
        message = await recv_json(ws)
        if message.get("type") in ("result", "error"):
            return message


async def next_broadcast(ws):
    while True:
        message = await recv_json(ws)
        if message.get("type") == "broadcast":
            return message


async def call(ws, req_id, op, input=None, stream=False, events=None, others=None):
    request = {"reqId": req_id, "op": op}
    if input is not None:
        request["input"] = input
    if stream:
        request["stream"] = True
    await ws.send(json.dumps(request))
    return await reply_to(ws, req_id, events, others)


async def rejected(url, **kwargs):
    """The HTTP status of a refused upgrade (101 if it opened)."""
    try:
        async with connect(url, open_timeout=WAIT, **kwargs):
            return 101
    except InvalidStatus as error:
        return error.response.status_code


async def scenario(url, key, marker_dir):
    report = {}
    auth = {"Authorization": f"Bearer {key}"}

    # Two connections: the key as a header, and as browsers send it.
    async with connect(url, additional_headers=auth) as a, connect(
        f"{url}?access_token={key}"
    ) as b:
        # The caller's own broadcast and its reply travel separately: the
        # broadcast may reach it before or after the reply.
        seen_by_a = []
        report["create"] = await call(
            a, 1, "notes.create", {"title": "From Python", "body": "over ws", "tags": ["py"]},
            others=seen_by_a,
        )
        report["broadcast_b"] = await next_broadcast(b)
        early = [m for m in seen_by_a if m.get("type") == "broadcast"]
        report["broadcast_a"] = early[0] if early else await next_broadcast(a)

        # A request without reqId gets a reply without it.
        await a.send(json.dumps({"op": "notes.get", "input": {"id": 1}}))
        report["get_no_req_id"] = await next_reply(a)

        report["get_missing"] = await call(a, "m", "notes.get", {"id": 999})
        report["unknown"] = await call(a, "u", "no.such.op", {})
        report["duplex"] = await call(a, "d", "diag.duplex", {})
        report["search"] = await call(a, "s", "notes.search", {"query": "python"})
        report["search_empty"] = await call(a, "se", "notes.search", {"query": ""})

        events = []
        report["export"] = await call(
            a, "e", "notes.export", {"format": "json"}, stream=True, events=events
        )
        report["export_events"] = events

        # Hostile frames: each gets an error reply and the socket keeps serving.
        hostile = {}
        await a.send(b"\x00\x9f\x92\x96")
        hostile["binary"] = await next_reply(a)
        await a.send('{"op": "notes.get", ')
        hostile["invalid_json"] = await next_reply(a)
        await a.send(json.dumps([1, 2, 3]))
        hostile["not_an_object"] = await next_reply(a)
        await a.send(json.dumps({"reqId": "t1", "op": 42}))
        hostile["op_not_a_string"] = await next_reply(a)
        await a.send(json.dumps({"reqId": {"no": 1}, "op": "notes.get"}))
        hostile["req_id_not_scalar"] = await next_reply(a)
        hostile["input_wrong_types"] = await call(a, "t2", "notes.get", {"id": "seven"})
        hostile["input_not_an_object"] = await call(a, "t3", "notes.get", "seven")
        hostile["after"] = await call(a, "t4", "notes.list", {"limit": 5})
        report["hostile"] = hostile

        # A flood of long calls: past the in-flight cap, BUSY at once; then
        # cancel the running ones (ABORTED) and the socket serves again.
        flood = 100
        for i in range(flood):
            await a.send(json.dumps({"reqId": f"f{i}", "op": "diag.sleep", "input": {"ms": 60000}}))
        busy = []
        while len(busy) < flood - 32:
            message = await next_reply(a)
            busy.append(message)
        report["flood_busy"] = [m["reqId"] for m in busy if m.get("code") == "BUSY"]
        report["flood_busy_message"] = busy[0].get("message")
        for i in range(32):
            await a.send(json.dumps({"type": "cancel", "reqId": f"f{i}"}))
        aborted = []
        while len(aborted) < 32:
            aborted.append(await next_reply(a))
        report["flood_aborted"] = sorted({m.get("code") for m in aborted})
        report["after_flood"] = await call(a, "af", "notes.list", {"limit": 1})

    # The handshake checks.
    report["status_no_key"] = await rejected(url)
    report["status_wrong_key"] = await rejected(url, additional_headers={"Authorization": "Bearer nope"})
    report["status_evil_origin"] = await rejected(
        url, additional_headers=auth, origin="https://evil.example"
    )
    report["status_page_origin"] = await rejected(
        url, additional_headers=auth, origin=url.replace("ws://", "http://").rsplit("/", 1)[0]
    )

    # An oversize message (over the 1 MiB limit) closes with 1009.
    async with connect(url, additional_headers=auth) as c:
        try:
            # The server may close while the frame is still being written:
            # then `send` itself reports the close.
            await c.send(json.dumps({"op": "notes.create", "input": {"title": "x" * (2 * 1024 * 1024)}}))
            await asyncio.wait_for(c.recv(), WAIT)
            report["oversize"] = {"closed": False}
        except ConnectionClosed as closed:
            report["oversize"] = {
                "closed": True,
                "code": closed.rcvd.code if closed.rcvd else None,
                "reason": closed.rcvd.reason if closed.rcvd else None,
            }
    async with connect(url, additional_headers=auth) as c:
        report["after_oversize"] = await call(c, 1, "notes.get", {"id": 1})

    # A disconnect mid-call: the handler is dropped (its marker file says so).
    marker = os.path.join(marker_dir, "ws-disconnect")
    d = await connect(url, additional_headers=auth)
    await d.send(
        json.dumps(
            {"reqId": "z", "op": "diag.sleep", "input": {"ms": 60000, "marker": marker}, "stream": True}
        )
    )
    started = await recv_json(d)
    report["sleep_started"] = started
    # Gone without a close handshake, as a crashed client would be.
    d.transport.abort()
    report["marker"] = marker

    async with connect(url, additional_headers=auth) as e:
        report["after_disconnect"] = await call(e, 1, "notes.list", {"limit": 1})
    return report


def main():
    url, key, marker_dir = sys.argv[1:4]
    report = asyncio.run(scenario(url, key, marker_dir))
    print(json.dumps(report))


if __name__ == "__main__":
    main()
