"""Calls the detached notes tools with the official Python SDK (`mcp` on
PyPI), which validates every `structuredContent` against the tool's
advertised `outputSchema` and raises when it does not match. Without
`wait` the tools answer a job handle; the job is then polled with
`jobs.result`. Also calls the other answers that could disagree with an
advertised schema: errors of tools with an output schema, a timeout, the
`jobs.*` tools. Prints one JSON object; each call is either its result or
the exception the SDK raised. The Rust test
(tests/tests/mcp/detached_schema.rs) makes the assertions.

usage: python_detached.py legacy|auto URL
  legacy: a 2025 session (initialize, ended with an HTTP DELETE)
  auto:   the SDK's default, the stateless 2026-07-28 era
"""

import json
import logging
import sys

import anyio
from mcp import Client


def wire(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


class Warnings(logging.Handler):
    """Keeps what the SDK logs at WARNING and above."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.lines = []

    def emit(self, record):
        self.lines.append(record.getMessage())


async def call(client, name, arguments):
    try:
        return {"result": wire(await client.call_tool(name, arguments))}
    except Exception as error:  # the SDK's validation error, reported
        return {"raised": f"{type(error).__name__}: {error}"}


async def scenario(mode, url, warnings):
    report = {"calls": {}}
    calls = report["calls"]
    async with Client(url, mode=mode) as client:
        report["protocol_version"] = client.protocol_version
        tools = (await client.list_tools()).tools
        report["output_schemas"] = {
            t.name: t.output_schema for t in tools if t.name in ("notes.reindex", "notes.export_file")
        }
        await client.call_tool("notes.create", {"title": "One"})
        await client.call_tool("notes.create", {"title": "Two"})
        for name, arguments in [
            ("notes.reindex", {}),
            ("notes.export_file", {"path": f"export-{mode}.md"}),
        ]:
            launched = await call(client, name, arguments)
            calls[name] = launched
            job = launched.get("result", {}).get("structuredContent", {}).get("jobId")
            if job:
                calls[name + " jobs.status"] = await call(client, "jobs.status", {"jobId": job})
                calls[name + " jobs.result"] = await call(
                    client, "jobs.result", {"jobId": job, "waitMs": 60000}
                )
        # Waited: the tool's own result, the first branch of the schema.
        calls["notes.reindex wait"] = await call(client, "notes.reindex", {"wait": True})
        # A job that fails, then its error through jobs.result.
        failing = await call(client, "notes.export_file", {"path": "/absolute.md"})
        calls["notes.export_file absolute"] = failing
        job = failing.get("result", {}).get("structuredContent", {}).get("jobId")
        if job:
            calls["notes.export_file absolute jobs.result"] = await call(
                client, "jobs.result", {"jobId": job, "waitMs": 60000}
            )
        # Errors of tools with an output schema; an error before the job.
        calls["notes.get missing"] = await call(client, "notes.get", {"id": 999})
        calls["notes.export_file invalid"] = await call(
            client, "notes.export_file", {"path": "x.md", "format": "pdf"}
        )
        # A call past its time limit.
        calls["diag.timeout"] = await call(client, "diag.timeout", {})
        # The jobs.* tools themselves.
        calls["jobs.list"] = await call(client, "jobs.list", {})
        calls["jobs.status missing"] = await call(client, "jobs.status", {"jobId": "job-0-0"})
        calls["jobs.cancel missing"] = await call(client, "jobs.cancel", {"jobId": "job-0-0"})
        calls["jobs.result missing"] = await call(client, "jobs.result", {"jobId": "job-0-0"})
    report["warnings"] = list(warnings.lines)
    return report


def main():
    mode, url = sys.argv[1], sys.argv[2]
    warnings = Warnings()
    logging.getLogger().addHandler(warnings)
    report = anyio.run(scenario, mode, url, warnings)
    json.dump(report, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
