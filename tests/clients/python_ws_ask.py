"""Answers the questions a WebSocket server asks during calls (#28), with the
Python `websockets` library (PyPI), and prints what it observed as one JSON
object on stdout. The Rust test (tests/tests/ws/asking.rs) makes the
assertions.

usage: python_ws_ask.py WS_URL API_KEY form|approval

form:     against `notes serve` with the diagnostic tools: `diag.ask` asks an
          order form; it is answered, declined, asked without canAnswer,
          answered with a bad answer, and left waiting on a socket that
          closes.
approval: against a server whose write tools ask the caller for approval:
          yes, no, never answered, and a request without canAnswer.
"""

import asyncio
import json
import sys

from websockets.asyncio.client import connect

WAIT = 30


async def recv_json(ws):
    return json.loads(await asyncio.wait_for(ws.recv(), WAIT))


async def until(ws, kinds, req_id=None):
    """The next message of one of `kinds` (for `req_id` when given)."""
    while True:
        message = await recv_json(ws)
        if message.get("type") in kinds and (req_id is None or message.get("reqId") == req_id):
            return message


async def ask_and_answer(ws, req_id, op, input, answer):
    """Calls op saying it can answer; answers the first question with
    `answer` (None: never answers). Returns (question, reply)."""
    await ws.send(json.dumps({"reqId": req_id, "op": op, "input": input, "canAnswer": ["elicitation"]}))
    question = await until(ws, ("question", "result", "error"), req_id)
    if question["type"] != "question":
        return None, question
    if answer is not None:
        await ws.send(json.dumps({"type": "answer", "id": question["id"], "answer": answer}))
    reply = await until(ws, ("result", "error"), req_id)
    return question, reply


async def form(url, key):
    report = {}
    headers = {"Authorization": f"Bearer {key}"}
    async with connect(url, additional_headers=headers) as ws:
        order = {"name": "Ada", "count": 3, "size": "large", "gift": True}
        question, reply = await ask_and_answer(ws, 1, "diag.ask", {}, {"action": "accept", "content": order})
        report["accept_question"] = question
        report["accept"] = reply
        _, report["decline"] = await ask_and_answer(ws, 2, "diag.ask", {}, {"action": "decline"})

        # Without canAnswer nothing is asked: the reply comes at once.
        await ws.send(json.dumps({"reqId": 3, "op": "diag.ask", "input": {}}))
        report["unanswerable"] = await until(ws, ("result", "error"), 3)

        # A bad answer and an answer to no question get error replies; the
        # question keeps waiting and a good answer still lands.
        await ws.send(json.dumps({"reqId": 4, "op": "diag.ask", "input": {}, "canAnswer": ["elicitation"]}))
        question = await until(ws, ("question",), 4)
        await ws.send(json.dumps({"type": "answer", "id": question["id"], "answer": {"action": "perhaps"}}))
        report["bad_shape"] = await until(ws, ("error",))
        await ws.send(json.dumps({"type": "answer", "id": "q999", "answer": {"action": "accept"}}))
        report["no_such_question"] = await until(ws, ("error",))
        await ws.send(json.dumps({"type": "answer", "id": question["id"], "answer": {"action": "cancel"}}))
        report["after_bad"] = await until(ws, ("result", "error"), 4)

    # A socket that closes while its question waits: the server goes on.
    async with connect(url, additional_headers=headers) as ws:
        await ws.send(json.dumps({"reqId": 5, "op": "diag.ask", "input": {}, "canAnswer": ["elicitation"]}))
        report["abandoned_question"] = await until(ws, ("question",), 5)
    async with connect(url, additional_headers=headers) as ws:
        await ws.send(json.dumps({"reqId": 6, "op": "notes.list", "input": {}}))
        report["after_close"] = await until(ws, ("result", "error"), 6)
    return report


async def approval(url, key):
    report = {}
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    async with connect(url, additional_headers=headers) as ws:
        yes = {"action": "accept", "content": {"approve": True}}
        question, report["approve"] = await ask_and_answer(ws, 1, "notes.create", {"title": "Asked"}, yes)
        report["approve_question"] = question
        no = {"action": "accept", "content": {"approve": False}}
        _, report["deny"] = await ask_and_answer(ws, 2, "notes.create", {"title": "Refused"}, no)
        question, report["silent"] = await ask_and_answer(ws, 3, "notes.create", {"title": "Unanswered"}, None)
        report["silent_question"] = question
        await ws.send(json.dumps({"reqId": 4, "op": "notes.create", "input": {"title": "Unasked"}}))
        report["unasked"] = await until(ws, ("result", "error"), 4)
        await ws.send(json.dumps({"reqId": 5, "op": "notes.list", "input": {}}))
        report["list"] = await until(ws, ("result", "error"), 5)
    return report


async def main():
    url, key, mode = sys.argv[1], sys.argv[2], sys.argv[3]
    report = await (form(url, key) if mode == "form" else approval(url, key))
    print(json.dumps(report))


asyncio.run(main())
