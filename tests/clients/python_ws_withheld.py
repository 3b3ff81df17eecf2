"""Calls a write tool and a read tool over the notes WebSocket endpoint
(`notes serve` without --allow-writes) with the Python `websockets` library
and prints both replies as one JSON object.

usage: python_ws_withheld.py WS_URL API_KEY
"""

import asyncio
import json
import sys

from websockets.asyncio.client import connect


async def scenario(url, key):
    report = {}
    async with connect(url, additional_headers={"Authorization": f"Bearer {key}"}) as ws:
        for req_id, op, input in [
            ("create", "notes.create", {"title": "nope"}),
            ("list", "notes.list", {}),
        ]:
            await ws.send(json.dumps({"reqId": req_id, "op": op, "input": input}))
            report[req_id] = json.loads(await asyncio.wait_for(ws.recv(), 30))
    return report


print(json.dumps(asyncio.run(scenario(sys.argv[1], sys.argv[2]))))
