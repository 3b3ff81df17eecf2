// Calls the detached notes tools with one of the official TypeScript SDKs,
// whose Client validates every `structuredContent` against the tool's
// advertised `outputSchema` and throws when it does not match. Without
// `wait` the tools answer a job handle; the job is then polled with
// `jobs.result`. Prints one JSON object; each call is either its result or
// the error the SDK threw. The Rust test (tests/tests/mcp/detached_schema.rs)
// makes the assertions.
//
// SDK: v1       @modelcontextprotocol/sdk 1.x (the 2025 session era)
//      v2-auto  @modelcontextprotocol/client 2.x, versionNegotiation auto
//               (the stateless 2026-07-28 era)
//
// usage: node ts_detached.mjs SDK URL
const [sdk, url] = process.argv.slice(2);

let Client, StreamableHTTPClientTransport;
if (sdk === "v1") {
  ({ Client } = await import("@modelcontextprotocol/sdk/client/index.js"));
  ({ StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js"));
} else if (sdk === "v2-auto") {
  ({ Client, StreamableHTTPClientTransport } = await import("@modelcontextprotocol/client"));
} else {
  console.error(`unknown SDK ${sdk}: use v1 or v2-auto`);
  process.exit(2);
}

const options = sdk === "v2-auto" ? { versionNegotiation: { mode: "auto" } } : {};
const client = new Client({ name: "gonk-tools-ts-detached", version: "1.0.0" }, options);
await client.connect(new StreamableHTTPClientTransport(new URL(url)));

async function call(name, args) {
  try {
    return { result: await client.callTool({ name, arguments: args }) };
  } catch (error) {
    return { raised: String(error?.message ?? error) };
  }
}

const report = { sdk, calls: {} };
if (typeof client.getNegotiatedProtocolVersion === "function") {
  report.protocol_version = client.getNegotiatedProtocolVersion();
}
const tools = (await client.listTools()).tools;
report.output_schemas = Object.fromEntries(
  tools.filter((t) => t.name === "notes.reindex" || t.name === "notes.export_file").map((t) => [t.name, t.outputSchema]),
);
await client.callTool({ name: "notes.create", arguments: { title: "One" } });
await client.callTool({ name: "notes.create", arguments: { title: "Two" } });
const calls = report.calls;
for (const [name, args] of [
  ["notes.reindex", {}],
  ["notes.export_file", { path: `export-ts-${sdk}.md` }],
]) {
  const launched = await call(name, args);
  calls[name] = launched;
  const job = launched.result?.structuredContent?.jobId;
  if (job) {
    calls[`${name} jobs.status`] = await call("jobs.status", { jobId: job });
    calls[`${name} jobs.result`] = await call("jobs.result", { jobId: job, waitMs: 60000 });
  }
}
calls["notes.reindex wait"] = await call("notes.reindex", { wait: true });
calls["notes.get missing"] = await call("notes.get", { id: 999 });
calls["diag.timeout"] = await call("diag.timeout", {});
calls["jobs.list"] = await call("jobs.list", {});
await client.close();
process.stdout.write(JSON.stringify(report) + "\n");
