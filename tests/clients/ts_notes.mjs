// Drives the notes MCP server with the official TypeScript SDK
// (@modelcontextprotocol/sdk on npm) and prints what it observed as one JSON
// object on stdout. The Rust test (tests/tests/mcp/notes_clients.rs) makes
// the assertions.
//
// usage: node ts_notes.mjs stdio MARKER NOTES_BINARY [ARGS...]
//        node ts_notes.mjs http  MARKER URL [API_KEY]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const [mode, marker, target, ...rest] = process.argv.slice(2);
let transport;
if (mode === "stdio") {
  transport = new StdioClientTransport({
    command: target,
    args: rest,
    env: { ...process.env },
    stderr: "inherit",
  });
} else if (mode === "http") {
  const headers = rest[0] ? { Authorization: `Bearer ${rest[0]}` } : {};
  transport = new StreamableHTTPClientTransport(new URL(target), { requestInit: { headers } });
} else {
  console.error(`unknown mode ${mode}: use stdio or http`);
  process.exit(2);
}

const report = {};
const logs = [];
const client = new Client({ name: "gonk-tools-ts-test", version: "1.0.0" });
client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
  logs.push(n.params);
});
await client.connect(transport);
report.server = client.getServerVersion();
report.tools = (await client.listTools()).tools;

report.create = await client.callTool({
  name: "notes.create",
  arguments: { title: "Release checklist", body: "- tag v1", tags: ["release"] },
});
await client.callTool({ name: "notes.create", arguments: { title: "Rust ownership", tags: ["rust"] } });
report.search = await client.callTool({ name: "notes.search", arguments: { query: "release" } });
report.search_empty = await client.callTool({ name: "notes.search", arguments: { query: "" } });
report.get_missing = await client.callTool({ name: "notes.get", arguments: { id: 999 } });
report.unknown = await client.callTool({ name: "no.such.tool", arguments: {} });
report.duplex = await client.callTool({ name: "diag.duplex", arguments: {} });

// The SDK drops a progress notification that arrives in the same read as
// the response, so the export pauses between notes (delay_ms) to let the
// first notification travel on its own.
const progress = [];
report.export = await client.callTool(
  { name: "notes.export", arguments: { format: "json", delay_ms: 30 } },
  undefined,
  { onprogress: (p) => progress.push(p) },
);
report.progress = progress;

// Cancellation: start a long call, wait until its handler logs that it
// started, then abort it. The SDK sends notifications/cancelled; the server
// must drop the handler, which writes "dropped" to the marker file.
await client.setLoggingLevel("info");
logs.length = 0;
const abort = new AbortController();
const pending = client
  .callTool({ name: "diag.sleep", arguments: { ms: 60000, marker } }, undefined, {
    signal: abort.signal,
    timeout: 120000,
  })
  .then(
    () => "completed",
    (error) => `rejected: ${error?.message ?? error}`,
  );
const deadline = Date.now() + 20000;
while (!logs.some((l) => JSON.stringify(l).includes("sleeping"))) {
  if (Date.now() > deadline) {
    report.cancel_error = "the sleep handler never logged that it started";
    break;
  }
  await new Promise((r) => setTimeout(r, 20));
}
abort.abort("the test cancels the call");
report.cancel_outcome = await pending;
report.cancel_logs = [...logs];
report.after_cancel = await client.callTool({ name: "notes.search", arguments: { query: "release" } });

await client.close();
process.stdout.write(JSON.stringify(report) + "\n");
