// Drives the notes MCP server with one of the official TypeScript SDKs and
// prints what it observed as one JSON object on stdout: the protocol
// version and era the client negotiated, every JSON-RPC message on the
// connection's transport (summarised: direction, id, method, the protocol
// version in `_meta` or in an initialize result, an error code) and, over
// HTTP, the MCP headers of every request and the session ids the server
// handed back. The Rust test (tests/tests/mcp_era_clients.rs) makes the
// assertions.
//
// SDK: v1       @modelcontextprotocol/sdk 1.x (2025 only)
//      v2       @modelcontextprotocol/client 2.x with its default negotiation
//      v2-auto  the same with versionNegotiation { mode: "auto" }
//
// usage: node ts_era.mjs SDK stdio NOTES_BINARY [ARGS...]
//        node ts_era.mjs SDK http  URL
const [sdk, mode, target, ...rest] = process.argv.slice(2);

let Client, StdioClientTransport, StreamableHTTPClientTransport;
if (sdk === "v1") {
  ({ Client } = await import("@modelcontextprotocol/sdk/client/index.js"));
  ({ StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js"));
  ({ StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js"));
} else if (sdk === "v2" || sdk === "v2-auto") {
  ({ Client, StreamableHTTPClientTransport } = await import("@modelcontextprotocol/client"));
  ({ StdioClientTransport } = await import("@modelcontextprotocol/client/stdio"));
} else {
  console.error(`unknown SDK ${sdk}: use v1, v2 or v2-auto`);
  process.exit(2);
}

const META_VERSION = "io.modelcontextprotocol/protocolVersion";
const messages = [];
const http = [];
const sessionIds = [];

// Notes each JSON-RPC message the client sends or receives on `transport`
// (both SDKs assign `onmessage` on connect, then call `send`).
function tap(transport) {
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    messages.push(summary("out", message));
    return send(message, options);
  };
  let handler;
  Object.defineProperty(transport, "onmessage", {
    configurable: true,
    get: () => handler,
    set: (next) => {
      handler =
        next &&
        ((message, extra) => {
          messages.push(summary("in", message));
          return next(message, extra);
        });
    },
  });
}

function summary(direction, message) {
  const entry = { direction };
  if (message.id !== undefined) entry.id = message.id;
  if (message.method !== undefined) entry.method = message.method;
  const metaVersion = message.params?._meta?.[META_VERSION];
  if (metaVersion !== undefined) entry.meta_version = metaVersion;
  if (message.params?.protocolVersion !== undefined) entry.initialize_version = message.params.protocolVersion;
  if (message.result?.protocolVersion !== undefined) entry.result_version = message.result.protocolVersion;
  if (message.result?.supportedVersions !== undefined) entry.supported_versions = message.result.supportedVersions;
  if (message.error !== undefined) entry.error = message.error.code;
  return entry;
}

// Notes the MCP headers of each HTTP request and the session id of each answer.
async function recordingFetch(url, init) {
  const headers = new Headers(init?.headers);
  const noted = { http: init?.method ?? "GET" };
  for (const name of ["mcp-protocol-version", "mcp-method", "mcp-name", "mcp-session-id"]) {
    if (headers.has(name)) noted[name] = headers.get(name);
  }
  http.push(noted);
  const response = await fetch(url, init);
  const session = response.headers.get("mcp-session-id");
  if (session !== null) sessionIds.push(session);
  return response;
}

let transport;
if (mode === "stdio") {
  transport = new StdioClientTransport({ command: target, args: rest, env: { ...process.env }, stderr: "inherit" });
} else if (mode === "http") {
  transport = new StreamableHTTPClientTransport(new URL(target), { fetch: recordingFetch });
} else {
  console.error(`unknown mode ${mode}: use stdio or http`);
  process.exit(2);
}
tap(transport);

const options = sdk === "v2-auto" ? { versionNegotiation: { mode: "auto" } } : {};
const client = new Client({ name: "gonk-tools-ts-era", version: "1.0.0" }, options);
await client.connect(transport);

const report = { sdk };
if (typeof client.getNegotiatedProtocolVersion === "function") {
  report.protocol_version = client.getNegotiatedProtocolVersion();
  report.era = client.getProtocolEra();
}
report.server = client.getServerVersion() ?? null;
report.tools = (await client.listTools()).tools.map((t) => t.name);
report.create = await client.callTool({
  name: "notes.create",
  arguments: { title: "Release checklist", body: "- tag v1", tags: ["release"] },
});
report.search = await client.callTool({ name: "notes.search", arguments: { query: "release" } });
report.get_missing = await client.callTool({ name: "notes.get", arguments: { id: 999 } });
await client.close();

report.messages = messages;
if (mode === "http") {
  report.http = http;
  report.session_ids = sessionIds;
}
process.stdout.write(JSON.stringify(report) + "\n");
