/**
 * gonk-tools for Pi: registers the tools of a gonk-tools registry in Pi.
 *
 * The tools run in a Rust process (the bridge) that this extension starts
 * and talks to in JSON lines over its stdin/stdout:
 *
 *   -> {"type":"discover","id":"d1"}
 *   <- {"type":"tools","id":"d1","protocol":1,"tools":[{name,label,description,parameters}],"skipped":[…],"warnings":[…]}
 *   -> {"type":"execute","id":"c1","tool":"notes_search","input":{…}}
 *   <- {"type":"update","id":"c1","update":{content,details}}     (any number)
 *   <- {"type":"log","id":"c1","tool":"notes.search","level":"info","message":…}
 *   <- {"type":"result","id":"c1","result":{content,details?,isError?}}
 *   -> {"type":"abort","id":"c1"}                                   (then the result, [ABORTED])
 *   <- {"type":"error","id":…,"error":{code,message}}               (a line the bridge could not use)
 *
 * This file is a template: `gonk_tools::adapters::pi::write_pi_extension`
 * fills in LAUNCH (for the notes example: `notes --db PATH pi-extension > notes.ts`).
 * Load the result with `pi -e ./notes.ts`.
 *
 * Every call goes through the registry's one dispatch path on the Rust side
 * (validation, auth, approval, metrics). Pi's abort signal aborts the call
 * there (the handler is dropped). The tools' log lines never reach the model:
 * they are emitted on Pi's event bus as "gonk-tools:log"
 * ({id, tool, piName, level, message, meta?}) for other extensions, and
 * written to stderr when GONK_PI_LOG is set. A bridge that dies turns the calls it was
 * running into tool errors; the next call starts a new bridge.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { createInterface } from "node:readline";
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

interface Launch {
	command: string;
	args: string[];
	name: string;
}

const LAUNCH: Launch = { command: "", args: [], name: "gonk-tools" }; // gonk-tools:launch

const PROTOCOL = 1;
const DISCOVER_TIMEOUT_MS = Number(process.env.GONK_PI_DISCOVER_TIMEOUT_MS ?? 30000);
const STDERR_TAIL_LINES = 20;

type Content = { type: "text"; text: string } | { type: "image"; data: string; mimeType: string };

interface ToolResult {
	content: Content[];
	details?: unknown;
	isError?: boolean;
}

interface Update {
	content: Content[];
	details: unknown;
}

interface Spec {
	name: string;
	label: string;
	description: string;
	parameters: Record<string, unknown>;
}

interface Catalog {
	protocol: number;
	tools: Spec[];
	skipped: { name: string; reason: string }[];
	warnings: string[];
}

interface Pending {
	resolve(value: any): void;
	reject(error: Error): void;
	onUpdate?: (update: Update) => void;
	/** The Pi name of the tool a call runs. */
	tool?: string;
}

export interface LogEntry {
	id: string;
	tool: string;
	piName?: string;
	level: "debug" | "info" | "warn" | "error";
	message: string;
	meta?: unknown;
}

const ABORTED: ToolResult = {
	isError: true,
	content: [{ type: "text", text: "[ABORTED] Tool execution aborted" }],
};

class Bridge {
	private child?: ChildProcessWithoutNullStreams;
	private readonly pending = new Map<string, Pending>();
	private stderrTail: string[] = [];
	private nextId = 0;

	constructor(private readonly onLog: (entry: LogEntry) => void) {}

	/** Asks the bridge for the tools to register. */
	discover(): Promise<Catalog> {
		const id = `d${++this.nextId}`;
		return new Promise<Catalog>((resolve, reject) => {
			const timer = setTimeout(() => {
				if (this.pending.delete(id)) {
					reject(new Error(`${LAUNCH.name} tool bridge did not list its tools within ${DISCOVER_TIMEOUT_MS} ms${this.tail()}`));
					this.updateRef();
				}
			}, DISCOVER_TIMEOUT_MS);
			const settle = <T>(f: (value: T) => void) => (value: T) => {
				clearTimeout(timer);
				f(value);
			};
			this.request({ type: "discover", id }, { resolve: settle(resolve), reject: settle(reject) });
		});
	}

	/** Runs a tool; resolves with its result, rejects when the bridge dies. */
	execute(tool: string, input: unknown, signal: AbortSignal | undefined, onUpdate?: (update: Update) => void): Promise<ToolResult> {
		if (signal?.aborted) return Promise.resolve(ABORTED);
		const id = `c${++this.nextId}`;
		return new Promise<ToolResult>((resolve, reject) => {
			const onAbort = () => {
				if (this.pending.has(id)) this.write({ type: "abort", id });
			};
			const done = <T>(f: (value: T) => void) => (value: T) => {
				signal?.removeEventListener("abort", onAbort);
				f(value);
			};
			signal?.addEventListener("abort", onAbort, { once: true });
			this.request({ type: "execute", id, tool, input }, { resolve: done(resolve), reject: done(reject), onUpdate, tool });
		});
	}

	/** Ends the bridge's input: it aborts what is running and exits. */
	stop(): void {
		const child = this.child;
		if (!child) return;
		child.stdin.end();
		// Pi exits when it is done; a bridge that is slow to go must not hold it.
		setTimeout(() => child.kill("SIGKILL"), 5000).unref();
		this.updateRef();
	}

	private request(message: { id: string; [key: string]: unknown }, pending: Pending): void {
		this.pending.set(message.id, pending);
		try {
			this.write(message);
		} catch (error) {
			this.pending.delete(message.id);
			pending.reject(error instanceof Error ? error : new Error(String(error)));
		}
		this.updateRef();
	}

	private write(message: unknown): void {
		const child = this.child ?? this.start();
		child.stdin.write(`${JSON.stringify(message)}\n`);
	}

	private start(): ChildProcessWithoutNullStreams {
		if (!LAUNCH.command) {
			throw new Error(
				"this is the gonk-tools extension template: write a runnable extension with write_pi_extension (for the notes example: `notes pi-extension > notes.ts`)",
			);
		}
		const child = spawn(LAUNCH.command, LAUNCH.args, { stdio: ["pipe", "pipe", "pipe"] });
		this.child = child;
		this.stderrTail = [];
		createInterface({ input: child.stdout }).on("line", (line) => this.onLine(line));
		createInterface({ input: child.stderr }).on("line", (line) => {
			this.stderrTail.push(line);
			if (this.stderrTail.length > STDERR_TAIL_LINES) this.stderrTail.shift();
			if (process.env.GONK_PI_BRIDGE_STDERR) process.stderr.write(`[${LAUNCH.name}] ${line}\n`);
		});
		// A write to a bridge that went away fails here; "close" reports it.
		child.stdin.on("error", () => {});
		const gone = (why: string) => {
			if (this.child !== child) return;
			this.child = undefined;
			this.failAll(`${LAUNCH.name} tool bridge ${why}`);
		};
		child.on("error", (error) => gone(`could not be started (${LAUNCH.command}): ${error.message}`));
		// "close" comes after stdout is drained, so no result line is lost.
		child.on("close", (code, signal) => gone(signal ? `was killed by ${signal}` : `exited with code ${code}`));
		return child;
	}

	private onLine(line: string): void {
		let message: any;
		try {
			message = JSON.parse(line);
		} catch {
			return;
		}
		const pending = this.pending.get(message?.id);
		switch (message?.type) {
			case "update":
				pending?.onUpdate?.(message.update);
				return;
			case "log": {
				const { type: _, ...entry } = message;
				this.onLog({ ...entry, piName: pending?.tool });
				return;
			}
			case "result":
			case "tools":
				if (!pending) return;
				this.pending.delete(message.id);
				pending.resolve(message.type === "result" ? message.result : message);
				break;
			case "error":
				if (!pending) return;
				this.pending.delete(message.id);
				pending.reject(new Error(`[${message.error?.code}] ${message.error?.message}`));
				break;
			default:
				return;
		}
		this.updateRef();
	}

	private failAll(why: string): void {
		const error = new Error(`[BRIDGE_EXITED] ${why}${this.tail()}`);
		const pending = [...this.pending.values()];
		this.pending.clear();
		for (const p of pending) p.reject(error);
	}

	private tail(): string {
		return this.stderrTail.length ? `\n${this.stderrTail.join("\n")}` : "";
	}

	/** The bridge keeps Pi alive only while a request is pending. */
	private updateRef(): void {
		const child = this.child;
		if (!child) return;
		const busy = this.pending.size > 0;
		for (const handle of [child, child.stdin, child.stdout, child.stderr] as any[]) {
			if (busy) handle.ref?.();
			else handle.unref?.();
		}
	}
}

export default async function gonkTools(pi: ExtensionAPI) {
	const bridge = new Bridge((entry) => {
		pi.events.emit("gonk-tools:log", entry);
		if (process.env.GONK_PI_LOG) process.stderr.write(`[${entry.tool}] ${entry.level}: ${entry.message}\n`);
	});
	let catalog: Catalog;
	try {
		catalog = await bridge.discover();
		if (catalog.protocol !== PROTOCOL) {
			throw new Error(`the bridge speaks protocol ${catalog.protocol}, this extension ${PROTOCOL}; write the extension again with the same binary`);
		}
	} catch (error) {
		// Pi refuses to start when an extension fails to load; a missing or
		// broken binary only costs its tools.
		bridge.stop();
		const message = `${LAUNCH.name}: no tools registered: ${error instanceof Error ? error.message : String(error)}`;
		pi.on("session_start", (_event, ctx) => {
			if (ctx.hasUI) ctx.ui.notify(message, "error");
			else console.error(message);
		});
		return;
	}

	// Pi marks a result as an error only when execute throws, which would
	// keep only a message; the result's content is kept and flagged here.
	const failed = new Set<string>();
	for (const spec of catalog.tools) {
		pi.registerTool({
			name: spec.name,
			label: spec.label,
			description: spec.description,
			parameters: spec.parameters as any,
			async execute(toolCallId, params, signal, onUpdate) {
				const result = await bridge.execute(spec.name, params, signal, onUpdate as any);
				if (result.isError) failed.add(toolCallId);
				return { content: result.content, details: "details" in result ? result.details : {} } as any;
			},
		});
	}
	pi.on("tool_result", (event) => {
		if (failed.delete(event.toolCallId)) return { isError: true };
	});
	pi.on("session_shutdown", () => bridge.stop());
}
