// Opens a 2025 session on an MCP server with the official TypeScript SDK
// 1.x (@modelcontextprotocol/sdk, which speaks only the 2025 era, so it
// always initializes a session), calls one tool without arguments and
// prints what it got as one JSON object: the session id the server gave,
// the negotiated protocol version and the call's result. The Rust test
// (tests/tests/mcp/pressure.rs) makes the assertions.
//
// usage: node ts_session.mjs URL TOOL
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, tool] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url));
const client = new Client({ name: "pressure", version: "1.0.0" });
await client.connect(transport);
const result = await client.callTool({ name: tool, arguments: {} });
const report = {
  sessionId: transport.sessionId ?? null,
  protocolVersion: transport.protocolVersion ?? null,
  result,
};
await transport.terminateSession().catch(() => {});
await client.close();
console.log(JSON.stringify(report));
