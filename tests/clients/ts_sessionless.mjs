// Drives an MCP server over streamable HTTP with the TypeScript SDK 1.x
// (2025 revisions only): connect (initialize), list the tools, call TOOL
// with {}; prints the negotiated version, the session id the transport
// holds (none from a sessionless server), the tool names and the call's
// result as one JSON object. The Rust test makes the assertions.
//
// usage: node ts_sessionless.mjs URL TOOL
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, tool] = process.argv.slice(2);
const sessionHeaders = [];
const fetchTapped = async (input, init) => {
  const response = await fetch(input, init);
  sessionHeaders.push(response.headers.get("mcp-session-id"));
  return response;
};
const transport = new StreamableHTTPClientTransport(new URL(url), { fetch: fetchTapped });
const client = new Client({ name: "sessionless-test", version: "1.0.0" });
await client.connect(transport);
const tools = await client.listTools();
const call = await client.callTool({ name: tool, arguments: {} });
const report = {
  protocol_version: transport.protocolVersion ?? null,
  session_id: transport.sessionId ?? null,
  session_headers: sessionHeaders.filter((h) => h !== null),
  tools: tools.tools.map((t) => t.name),
  call,
};
await client.close();
console.log(JSON.stringify(report));
