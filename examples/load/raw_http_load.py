#!/usr/bin/env python3
"""A raw-HTTP load client for `notes serve`, independent of gonk-tools.

It speaks MCP JSON-RPC over streamable HTTP with nothing but the standard
library (http.client on kept-alive connections), so a figure it prints
does not depend on our own client. It starts `notes --db FILE serve` on a
fresh SQLite file, then for each session count runs one phase per tool
(notes.create, then notes.get of the created ids, then notes.search of
their titles), each for --seconds, with every session on its own
connection: 2025 sessions (initialize, the session id on every request)
or 2026 stateless calls (no handshake; `_meta`, `MCP-Protocol-Version`,
`Mcp-Method` and `Mcp-Name` on every request).

Per phase it prints calls/s, p50/p99 and the server's CPU per call: the
utime + stime of the server process (/proc/PID/stat) over the phase,
divided by the calls answered. CPU per call does not move much with other
load on the machine; calls/s and latencies do. After the run it stops the
server and checks in the SQLite file that every acknowledged create is
there exactly once, under the id the server answered (exit 1 otherwise).

    python3 examples/load/raw_http_load.py --notes target/release/notes \
        [--era 2025,2026] [--sessions 1,8] [--seconds 4]

With --calls N each phase makes N calls per session instead of running
for --seconds. Beside CPU per call it prints the system (kernel) part of
it and the server's voluntary context switches per call (its live
threads'); with --perf DIR each phase is also sampled by `perf record -g
-e cpu-clock` into DIR (`perf report -i DIR/2025-1-notes.get.data --sort
sym`); PERF_EVENT=sched:sched_switch records each context switch instead,
with the kernel path that made it (`perf report --no-children`), and
PERF_CALL_GRAPH=dwarf unwinds the user-space stacks too (the release build
has no frame pointers).

With --callgrind DIR the server runs under valgrind's callgrind, each
phase makes --calls calls per session (300 unless given), and
the counters are zeroed before and dumped after each phase
(`callgrind_control`), so DIR holds one profile per tool:
`callgrind_annotate DIR/cg.out.PID.N` (N = 1, 2, 3 for create, get,
search); its total divided by the phase's calls is instructions per call.
"""

import argparse
import http.client
import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

VERSIONS = {"2025": "2025-06-18", "2026": "2026-07-28"}
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_times(pid):
    """(utime, stime) of the process in seconds (every thread, live or ended)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    # After the command name: state is field 3 of the line, utime 14, stime 15.
    return int(fields[11]) / CLOCK_TICKS, int(fields[12]) / CLOCK_TICKS


def cpu_seconds(pid):
    """utime + stime of the process (every thread, live or ended)."""
    return sum(cpu_times(pid))


def context_switches(pid):
    """Voluntary context switches of the process's live threads."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/status") as status:
                for line in status:
                    if line.startswith("voluntary_ctxt_switches"):
                        total += int(line.split()[1])
        except OSError:
            pass  # the thread ended
    return total


class Session:
    """One MCP client on one kept-alive connection."""

    def __init__(self, url, era):
        parsed = urllib.parse.urlsplit(url)
        self.path = parsed.path
        self.conn = http.client.HTTPConnection(parsed.hostname, parsed.port)
        self.era = era
        self.session_id = None
        self.next_id = 1
        if era == "2025":
            self.initialize()

    def post(self, body, extra_headers):
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": VERSIONS[self.era],
        }
        if self.session_id:
            headers["Mcp-Session-Id"] = self.session_id
        headers.update(extra_headers)
        self.conn.request("POST", self.path, json.dumps(body), headers)
        response = self.conn.getresponse()
        return response, response.read()

    def answer(self, response, raw, request_id):
        """The JSON-RPC response with `request_id`, from JSON or SSE."""
        if response.status != 200:
            raise RuntimeError(f"HTTP {response.status}: {raw[:300]!r}")
        if response.getheader("Content-Type", "").startswith("text/event-stream"):
            for line in raw.decode().splitlines():
                if line.startswith("data:"):
                    message = json.loads(line[5:].strip() or "null")
                    if isinstance(message, dict) and message.get("id") == request_id:
                        return message
            raise RuntimeError(f"no answer in the stream: {raw[:300]!r}")
        return json.loads(raw)

    def initialize(self):
        body = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": VERSIONS["2025"],
                "capabilities": {},
                "clientInfo": {"name": "raw-http-load", "version": "1"},
            },
        }
        response, raw = self.post(body, {})
        self.answer(response, raw, 0)
        self.session_id = response.getheader("Mcp-Session-Id")
        if not self.session_id:
            raise RuntimeError("initialize opened no session")
        response, _ = self.post({"jsonrpc": "2.0", "method": "notifications/initialized"}, {})
        if response.status != 202:
            raise RuntimeError(f"notifications/initialized: HTTP {response.status}")

    def call(self, tool, arguments):
        """The tool's structured result; raises on an error."""
        request_id = self.next_id
        self.next_id += 1
        params = {"name": tool, "arguments": arguments}
        headers = {}
        if self.era == "2026":
            params["_meta"] = {
                "io.modelcontextprotocol/protocolVersion": VERSIONS["2026"],
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "raw-http-load", "version": "1"},
            }
            headers = {"Mcp-Method": "tools/call", "Mcp-Name": tool}
        body = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
        response, raw = self.post(body, headers)
        message = self.answer(response, raw, request_id)
        if "error" in message:
            raise RuntimeError(f"{tool}: {message['error']}")
        result = message["result"]
        if result.get("isError"):
            raise RuntimeError(f"{tool}: {result}")
        return result["structuredContent"]


def percentile(sorted_values, p):
    if not sorted_values:
        return 0.0
    return sorted_values[min(len(sorted_values) - 1, round((len(sorted_values) - 1) * p))]


def run_phase(sessions, tool, until, acked, run, calls=None):
    """Each session calls `tool` until `until` (or `calls` times); returns
    (latencies, errors)."""
    latencies, errors = [], []
    lock = threading.Lock()

    def work(n, session):
        mine, failed, i = [], [], 0
        own = acked[n]
        made = 0
        while (made < calls) if calls else (time.monotonic() < until):
            made += 1
            if tool == "notes.create":
                title = f"{run} s{n} #{i} raw"
                arguments = {"title": title, "body": "written under load", "tags": ["load"]}
            elif tool == "notes.get":
                arguments = {"id": own[i % len(own)][1]}
            else:
                arguments = {"query": f"s{n} #{i % len(own)}", "limit": 5}
            i += 1
            started = time.perf_counter()
            try:
                data = session.call(tool, arguments)
            except Exception as error:  # noqa: BLE001 - counted and shown
                failed.append(str(error))
                continue
            mine.append(time.perf_counter() - started)
            if tool == "notes.create":
                own.append((title, data["id"]))
        with lock:
            latencies.extend(mine)
            errors.extend(failed)

    threads = [
        threading.Thread(target=work, args=(n, session)) for n, session in enumerate(sessions)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return latencies, errors


def start_server(notes, db, callgrind=None):
    command = [notes, "--db", db, "serve", "--port", "0", "--allow-writes"]
    if callgrind:
        command = [
            "valgrind",
            "--tool=callgrind",
            f"--callgrind-out-file={callgrind}/cg.out.%p",
        ] + command
    server = subprocess.Popen(
        command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    for line in server.stderr:
        if line.startswith("notes: serving MCP at "):
            url = line[len("notes: serving MCP at ") :].split()[0]
            # Keep draining stderr so the server never blocks on it.
            threading.Thread(target=lambda: [None for _ in server.stderr], daemon=True).start()
            return server, url
    raise SystemExit("notes serve exited before it listened")


def check(db, acked):
    """Every acknowledged create is in the file exactly once, with its id."""
    connection = sqlite3.connect(db)
    for title, note_id in acked:
        count, found = connection.execute(
            "SELECT COUNT(*), MIN(id) FROM notes WHERE title = ?", (title,)
        ).fetchone()
        if count != 1 or found != note_id:
            return f"LOST OR DUPLICATED: {title!r} (id {note_id}) is there {count} times"
    rows = connection.execute("SELECT COUNT(*) FROM notes").fetchone()[0]
    return f"{len(acked)} acked, {rows} rows, each once"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", default="target/release/notes")
    parser.add_argument("--era", default="2025,2026")
    parser.add_argument("--sessions", default="1,8")
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--callgrind", metavar="DIR", help="profile each phase (see above)")
    parser.add_argument(
        "--calls",
        type=int,
        help="calls per session and phase instead of --seconds (default 300 under --callgrind)",
    )
    parser.add_argument("--perf", metavar="DIR", help="`perf record -g -e cpu-clock` (or $PERF_EVENT) each phase into DIR/TOOL.data")
    args = parser.parse_args()
    if args.callgrind and args.calls is None:
        args.calls = 300
    failed = False
    print(
        "| era | sessions | tool | calls | errors | calls/s | p50 ms | p99 ms "
        "| server CPU µs/call | of it system | context switches/call |"
    )
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory(prefix="raw-http-load-") as scratch:
        for era in args.era.split(","):
            for count in [int(n) for n in args.sessions.split(",")]:
                db = os.path.join(scratch, f"{era}-{count}.db")
                server, url = start_server(args.notes, db, args.callgrind)
                acked = [[] for _ in range(count)]
                per_tool = []
                try:
                    sessions = [Session(url, era) for _ in range(count)]
                    for tool in ["notes.create", "notes.get", "notes.search"]:
                        if args.callgrind:
                            subprocess.run(["callgrind_control", "-z", str(server.pid)], check=True, capture_output=True)
                        perf = None
                        if args.perf:
                            perf = subprocess.Popen(
                                ["perf", "record", "-e", os.environ.get("PERF_EVENT", "cpu-clock"), "--call-graph", os.environ.get("PERF_CALL_GRAPH", "fp"), "-p", str(server.pid),
                                 "-o", os.path.join(args.perf, f"{era}-{count}-{tool}.data")],
                                stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL,
                            )
                            time.sleep(0.5)  # perf attaches
                        (user, system), switches = cpu_times(server.pid), context_switches(server.pid)
                        started = time.monotonic()
                        until = started + args.seconds
                        latencies, errors = run_phase(sessions, tool, until, acked, f"r{era}{count}", args.calls)
                        if args.callgrind:
                            subprocess.run(["callgrind_control", f"--dump={tool}", str(server.pid)], check=True, capture_output=True)
                        elapsed = time.monotonic() - started
                        user_after, system_after = cpu_times(server.pid)
                        switches = context_switches(server.pid) - switches
                        if perf:
                            perf.send_signal(signal.SIGINT)
                            perf.wait()
                        calls_made = max(len(latencies), 1)
                        cpu = user_after - user + system_after - system
                        latencies.sort()
                        per_call = cpu / calls_made * 1e6
                        per_tool.append(per_call)
                        print(
                            f"| {era} | {count} | {tool} | {len(latencies)} | {len(errors)} | "
                            f"{len(latencies) / elapsed:.0f} | {percentile(latencies, 0.5) * 1e3:.2f} | "
                            f"{percentile(latencies, 0.99) * 1e3:.2f} | {per_call:.0f} | "
                            f"{(system_after - system) / calls_made * 1e6:.0f} | {switches / calls_made:.1f} |",
                            flush=True,
                        )
                        if errors:
                            failed = True
                            print(f"  first error: {errors[0]}")
                finally:
                    server.send_signal(signal.SIGTERM)
                    server.wait(timeout=30)
                everything = [pair for own in acked for pair in own]
                verdict = check(db, everything)
                failed |= verdict.startswith("LOST")
                mean = sum(per_tool) / len(per_tool)
                print(f"| {era} | {count} | mean of the three | | | | | | **{mean:.0f}** | | |")
                print(f"  database check ({era}, {count}): {verdict}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
