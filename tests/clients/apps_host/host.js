// A minimal MCP Apps host, in the browser, built on the official packages:
// the TypeScript SDK's `Client` (streamable HTTP, to `/mcp` of the page's own
// server, which forwards to `notes serve` as a chat host's backend would)
// and ext-apps' `AppBridge` (the host side of the app protocol). It does what
// a chat host does when its model calls a tool that links an app:
//
// 1. lists the tools and keeps `visibility: ["app"]` ones from the model's
//    list (what the model would be offered);
// 2. calls `notes.search` as the model would and shows the text fallback;
// 3. reads the `ui://` resource the tool links, and renders it in an iframe
//    sandboxed to `allow-scripts` (an opaque origin) under a CSP built from
//    the resource's `_meta.ui.csp`;
// 4. bridges the app: `tools/call` from the app is forwarded only for tools
//    whose visibility includes "app"; the search's input and result go to
//    the app once it is initialized; the frame follows the app's size;
// 5. answers the server's approval questions (elicitation) with a dialog
//    of its own: the user (the test) approves or declines.
//
// Everything it observes is in `window.hostReport`; the driver
// (tests/clients/apps_host.mjs) reads it, the Rust test asserts.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import {
  AppBridge,
  PostMessageTransport,
  RESOURCE_MIME_TYPE,
  buildAllowAttribute,
  getToolUiResourceUri,
} from "@modelcontextprotocol/ext-apps/app-bridge";

const UI_EXTENSION = "io.modelcontextprotocol/ui";
const HOST = { name: "gonk-tools-test-host", version: "1.0.0" };

const report = {
  appCalls: [],
  refusedAppCalls: [],
  approvals: [],
  sizes: [],
  errors: [],
};
window.hostReport = report;
const $ = (id) => document.getElementById(id);

// Who may see and call a tool: `_meta.ui.visibility`, ["model", "app"] when absent.
function visibility(tool) {
  return tool._meta?.ui?.visibility ?? ["model", "app"];
}

// The CSP of the spec's "Security" section from the resource's declared
// domains; nothing declared, nothing allowed beyond the inline page.
function contentSecurityPolicy(csp = {}) {
  const or = (domains, fallback) => (domains?.length ? domains.join(" ") : fallback);
  const resources = csp.resourceDomains?.length ? " " + csp.resourceDomains.join(" ") : "";
  return [
    "default-src 'none'",
    `script-src 'unsafe-inline'${resources}`,
    `style-src 'unsafe-inline'${resources}`,
    `img-src data:${resources}`,
    `font-src data:${resources}`,
    `media-src data:${resources}`,
    `connect-src ${or(csp.connectDomains, "'none'")}`,
    `frame-src ${or(csp.frameDomains, "'none'")}`,
    `base-uri ${or(csp.baseUriDomains, "'none'")}`,
    "object-src 'none'",
    "form-action 'none'",
  ].join("; ");
}

// The policy goes first in <head>, before any script of the app runs.
function withPolicy(html, policy) {
  const meta = `<meta http-equiv="Content-Security-Policy" content="${policy.replaceAll('"', "&quot;")}">`;
  const head = /<head[^>]*>/i.exec(html);
  if (head) return html.slice(0, head.index + head[0].length) + meta + html.slice(head.index + head[0].length);
  return meta + html;
}

// The server's question (an approval), answered by the user in a dialog.
function ask(params) {
  const question = { message: params.message, schema: params.requestedSchema ?? null };
  report.approvals.push(question);
  $("approval-message").textContent = params.message ?? "The server asks for approval.";
  $("approval").hidden = false;
  return new Promise((resolve) => {
    const done = (answer) => {
      question.answer = answer.action;
      $("approval").hidden = true;
      $("approve").onclick = $("decline").onclick = null;
      resolve(answer);
    };
    $("approve").onclick = () => {
      const content = {};
      for (const [name, field] of Object.entries(params.requestedSchema?.properties ?? {})) {
        if (field.type === "boolean") content[name] = true;
      }
      done({ action: "accept", content });
    };
    $("decline").onclick = () => done({ action: "decline" });
  });
}

async function main() {
  const query = new URLSearchParams(location.search).get("query") ?? "";
  const client = new Client(HOST, {
    capabilities: {
      elicitation: { form: {} },
      extensions: { [UI_EXTENSION]: { mimeTypes: [RESOURCE_MIME_TYPE] } },
    },
  });
  client.setRequestHandler("elicitation/create", (request) => ask(request.params));
  await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", location.href)));

  const tools = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : undefined);
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  report.tools = tools.map((tool) => ({
    name: tool.name,
    ui: tool._meta?.ui ?? null,
    legacyResourceUri: tool._meta?.["ui/resourceUri"] ?? null,
  }));
  const modelTools = tools.filter((tool) => visibility(tool).includes("model"));
  report.modelTools = modelTools.map((tool) => tool.name);

  // The model calls notes.search.
  const search = modelTools.find((tool) => tool.name === "notes.search");
  if (!search) throw new Error("notes.search is not offered to the model");
  const args = { query, limit: 10 };
  $("call").textContent = JSON.stringify(args);
  const result = await client.callTool({ name: search.name, arguments: args });
  report.searchResult = result;
  $("text").textContent = result.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");

  // Its app.
  const uri = getToolUiResourceUri(search);
  report.resourceUri = uri ?? null;
  if (!uri) throw new Error("notes.search links no app");
  const read = await client.readResource({ uri });
  const content = read.contents.find((c) => c.uri === uri) ?? read.contents[0];
  let ui = content._meta?.ui;
  if (!ui) {
    const listed = await client.listResources();
    ui = listed.resources.find((r) => r.uri === uri)?._meta?.ui;
  }
  report.resource = { uri: content.uri, mimeType: content.mimeType, ui: ui ?? null };
  if (content.mimeType !== RESOURCE_MIME_TYPE) throw new Error(`${uri} is ${content.mimeType}, not an app`);

  const policy = contentSecurityPolicy(ui?.csp);
  const frame = document.createElement("iframe");
  frame.setAttribute("sandbox", "allow-scripts");
  const allow = buildAllowAttribute(ui?.permissions);
  if (allow) frame.setAttribute("allow", allow);
  if (ui?.prefersBorder) frame.className = "bordered";
  frame.title = uri;
  $("app-caption").textContent = `app · ${uri}`;
  $("app").append(frame);

  const bridge = new AppBridge(
    null,
    HOST,
    { serverTools: {}, serverResources: {}, logging: {} },
    {
      hostContext: {
        theme: "light",
        displayMode: "inline",
        availableDisplayModes: ["inline"],
        platform: "web",
        toolInfo: { tool: search },
        containerDimensions: { width: 656, maxHeight: 900 },
      },
    },
  );
  // The app reaches the server only through here, and only tools it may call.
  bridge.oncalltool = async (params) => {
    const tool = tools.find((t) => t.name === params.name);
    if (!tool || !visibility(tool).includes("app")) {
      report.refusedAppCalls.push(params.name);
      throw new Error(`${params.name} is not a tool of this server the app may call`);
    }
    report.appCalls.push(params.name);
    return client.callTool(params);
  };
  bridge.onreadresource = (params) => client.readResource(params);
  bridge.onlistresources = (params) => client.listResources(params);
  bridge.onsizechange = ({ width, height }) => {
    report.sizes.push({ width, height });
    if (height) frame.style.height = `${Math.min(height, 900)}px`;
  };
  bridge.oninitialized = async () => {
    report.appVersion = bridge.getAppVersion() ?? null;
    await bridge.sendToolInput({ arguments: args });
    await bridge.sendToolResult(result);
    report.appInitialized = true;
  };
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  frame.srcdoc = withPolicy(content.text, policy);
  report.frame = { sandbox: frame.getAttribute("sandbox"), allow: frame.getAttribute("allow"), policy };
}

main().then(
  () => (report.rendered = true),
  (error) => {
    report.errors.push(String(error?.stack ?? error));
    report.rendered = false;
  },
);
