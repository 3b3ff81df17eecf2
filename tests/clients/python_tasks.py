"""Drives `notes mcp` over stdio with raw JSON-RPC (the standard library
only, no SDK) through the MCP tasks extension (`io.modelcontextprotocol/tasks`,
SEP-2663): a detached tool's call becomes a task, which is polled with
`tasks/get` to its result, and another is cancelled with `tasks/cancel`.
Prints what it observed as one JSON object; the Rust test
(tests/tests/mcp/tasks.rs) makes the assertions.

usage: python_tasks.py WORKDIR NOTES_BINARY [ARGS...]
"""

import json
import subprocess
import sys
import time

TASKS = "io.modelcontextprotocol/tasks"


class Session:
    def __init__(self, workdir, command, tasks):
        self.proc = subprocess.Popen(
            command, cwd=workdir, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        self.next_id = 0
        capabilities = {"extensions": {TASKS: {}}} if tasks else {}
        self.init = self.request(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": capabilities,
                "clientInfo": {"name": "python-raw-tasks", "version": "0"},
            },
        )
        self.notify("notifications/initialized", {})

    def send(self, message):
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def notify(self, method, params):
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method, params):
        self.next_id += 1
        wanted = self.next_id
        self.send({"jsonrpc": "2.0", "id": wanted, "method": method, "params": params})
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"server closed stdout waiting for {method}")
            message = json.loads(line)
            if message.get("id") == wanted:
                return message

    def call(self, name, arguments):
        return self.request("tools/call", {"name": name, "arguments": arguments})

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=10)


def poll(session, task_id, until, timeout=20):
    """tasks/get until `until(result)`; returns every answer seen."""
    seen = []
    deadline = time.time() + timeout
    while time.time() < deadline:
        answer = session.request("tasks/get", {"taskId": task_id})
        seen.append(answer)
        if "error" in answer or until(answer["result"]):
            return seen
        time.sleep(0.05)
    raise RuntimeError(f"task {task_id} never reached the awaited state: {seen[-1]}")


def main():
    workdir, command = sys.argv[1], sys.argv[2:]
    report = {}

    session = Session(workdir, command, tasks=True)
    report["initialize"] = session.init
    for i in range(450):
        session.call("notes.create", {"title": f"Note {i}", "body": "text " * 20})

    # A detached call becomes a task; poll it to its result.
    created = session.call("notes.export_file", {"path": "all.md", "delay_ms": 300})
    report["created"] = created
    task_id = created["result"]["taskId"]
    seen = poll(session, task_id, lambda r: r["status"] != "working")
    report["polled"] = seen
    report["done"] = seen[-1]

    # Cancel a slow one while it runs.
    slow = session.call("notes.export_file", {"path": "slow.md", "delay_ms": 10000})
    report["slow_created"] = slow
    slow_id = slow["result"]["taskId"]
    poll(session, slow_id, lambda r: "exported" in (r.get("statusMessage") or ""))
    report["cancel"] = session.request("tasks/cancel", {"taskId": slow_id})
    report["cancelled"] = poll(session, slow_id, lambda r: r["status"] != "working")[-1]

    # A caller that waits gets the result inline, task or not.
    report["waited"] = session.call(
        "notes.export_file", {"path": "waited.json", "format": "json", "wait": True}
    )
    # A tool error inside a task: a completed task whose result is an error.
    again = session.call("notes.export_file", {"path": "all.md"})
    report["again_created"] = again
    report["again_done"] = poll(
        session, again["result"]["taskId"], lambda r: r["status"] != "working"
    )[-1]
    # Input the schema refuses is refused at once: no task.
    report["invalid"] = session.call("notes.export_file", {"path": "x.md", "format": "pdf"})
    report["unknown_task"] = session.request("tasks/get", {"taskId": "job-0-0"})
    # A tool that is not detached answers inline as always.
    report["plain"] = session.call("notes.get", {"id": 1})
    session.close()

    # A client without the extension gets the job handle as the result.
    plain = Session(workdir, command, tasks=False)
    report["no_tasks_created"] = plain.call("notes.export_file", {"path": "handle.md"})
    report["no_tasks_get"] = plain.request("tasks/get", {"taskId": task_id})
    plain.close()

    print(json.dumps(report))


main()
