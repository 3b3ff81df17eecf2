// The official TypeScript SDK (@modelcontextprotocol/sdk on npm) against an
// MCP server behind OAuth: its client auth provider interface and
// `StreamableHTTPClientTransport` do the whole authorization-code flow
// with PKCE (discovery, dynamic registration, the `resource` parameter,
// the token exchange, a step-up when the server asks for a wider scope),
// and this script plays the person in between: it follows the
// authorization URL like a browser, signs in as ACCOUNT on the
// authorization server's login form, allows its consent form, and hands
// the SDK the code it was sent back with (`finishAuth`). Then it creates a
// note and searches for it, and prints what it saw as one JSON object. The
// Rust test (tests/tests/mcp/oauth_e2e.rs) makes the assertions.
//
// usage: node ts_oauth.mjs URL ACCOUNT TITLE
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { auth, UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, account, title] = process.argv.slice(2);
// No one listens here: the browser stops when it is sent back to it.
const REDIRECT_URI = "http://127.0.0.1:9/callback";

// Follows the authorization URL (cookies kept), submits the login and
// consent forms, and returns the URL the browser is sent back to.
async function browse(start) {
  const origin = new URL(start).origin;
  const cookies = new Map();
  let target = new URL(start);
  let body;
  for (let step = 0; step < 20; step += 1) {
    const headers = {};
    const sent = [...cookies].filter(([, c]) => target.pathname.startsWith(c.path)).map(([n, c]) => `${n}=${c.value}`);
    if (sent.length) headers.cookie = sent.join("; ");
    if (body) headers["content-type"] = "application/x-www-form-urlencoded";
    const response = await fetch(target, { method: body ? "POST" : "GET", body, headers, redirect: "manual" });
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(";").map((part) => part.trim());
      const at = pair.indexOf("=");
      const name = pair.slice(0, at);
      const value = pair.slice(at + 1);
      const path = attributes.find((a) => a.toLowerCase().startsWith("path="))?.slice(5) ?? "/";
      const expired = !value || attributes.some((a) => /^(max-age=0|expires=thu, 01 jan 1970)/i.test(a));
      if (expired) cookies.delete(name);
      else cookies.set(name, { value, path });
    }
    if (response.status >= 300 && response.status < 400) {
      const next = new URL(response.headers.get("location"), target);
      if (next.origin !== origin) return next;
      target = next;
      body = undefined;
      continue;
    }
    const page = await response.text();
    if (response.status !== 200) throw new Error(`${target} answered ${response.status}: ${page}`);
    const action = /<form[^>]*action="([^"]+)"/.exec(page);
    if (!action) throw new Error(`${target}: a page without a form: ${page}`);
    const form = new URLSearchParams();
    for (const input of page.matchAll(/<input([^>]*)>/g)) {
      const name = /name="([^"]*)"/.exec(input[1])?.[1];
      if (name) form.set(name, name === "login" ? account : (/value="([^"]*)"/.exec(input[1])?.[1] ?? ""));
    }
    target = new URL(action[1], target);
    body = form.toString();
  }
  throw new Error("still not sent back to the client after 20 steps");
}

const logins = [];
const tokens = [];
let returned;

// The SDK's OAuthClientProvider interface, kept in memory.
const provider = {
  get redirectUrl() { return REDIRECT_URI; },
  get clientMetadata() {
    return {
      client_name: "typescript sdk oauth test",
      redirect_uris: [REDIRECT_URI],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  },
  clientInformation() { return this.client; },
  saveClientInformation(client) { this.client = client; },
  tokens() { return this.saved; },
  saveTokens(saved) {
    this.saved = saved;
    tokens.push(...[saved.access_token, saved.refresh_token].filter(Boolean));
  },
  async redirectToAuthorization(authorizationUrl) {
    logins.push(authorizationUrl.toString());
    returned = await browse(authorizationUrl.toString());
  },
  saveCodeVerifier(verifier) { this.verifier = verifier; },
  codeVerifier() { return this.verifier; },
};

// The SDK stops at UnauthorizedError once the person was sent to the
// authorization page; the code they came back with finishes it.
async function finish(transport) {
  const back = returned;
  returned = undefined;
  if (!back) throw new Error("unauthorized, and no authorization was started");
  const error = back.searchParams.get("error");
  if (error) throw new Error(`the authorization server refused: ${error}`);
  await transport.finishAuth(back.searchParams.get("code"));
}

const client = new Client({ name: "ts-oauth-test", version: "1.0.0" });
let transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
try {
  await client.connect(transport);
} catch (error) {
  if (!(error instanceof UnauthorizedError)) throw error;
  await finish(transport);
  transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  await client.connect(transport);
}

// A call the server refuses for want of a scope is stepped up by the SDK;
// when that needs the person, the call is made again after the login.
async function withLogin(call) {
  for (let attempt = 0; attempt < 4; attempt += 1) {
    try {
      return await call();
    } catch (error) {
      // The SDK's step-up first refreshes the token it has, which keeps
      // its scopes, and then gives up on the same 403: forget the token and
      // authorize anew (the SDK's `auth`) with the wider scope.
      if (String(error?.message).includes("403 after trying upscoping")) {
        provider.saved = undefined;
        await auth(provider, { serverUrl: new URL(url), scope: "notes:read notes:write" });
        await finish(transport);
        continue;
      }
      if (!(error instanceof UnauthorizedError) || !returned) throw error;
      await finish(transport);
    }
  }
  throw new Error("still unauthorized after three logins");
}

const listed = await withLogin(() => client.listTools());
const created = await withLogin(() => client.callTool({ name: "notes.create", arguments: { title, body: "made behind OAuth" } }));
const found = await withLogin(() => client.callTool({ name: "notes.search", arguments: { query: title } }));
await client.close();
console.log(JSON.stringify({
  tools: listed.tools.map((tool) => tool.name),
  created,
  found,
  logins,
  tokens,
}));
