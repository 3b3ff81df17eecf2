/**
 * gonk-tools for Pi: registers the tools of a gonk-tools registry in Pi.
 *
 * The tools run in a Rust process (the bridge) that this extension starts
 * and talks to in JSON lines over its stdin/stdout:
 *
 *   -> {"type":"discover","id":"d1"}
 *   <- {"type":"tools","id":"d1","protocol":1,"tools":[{name,label,description,parameters}],"skipped":[…],"warnings":[…]}
 *   -> {"type":"execute","id":"c1","tool":"notes_search","input":{…},"canAnswer":["elicitation"]?}
 *   <- {"type":"question","id":"q1","callId":"c1","key":"approval-1","request":{method,params}}
 *   -> {"type":"answer","id":"q1","answer":{"action":"accept"|"decline"|"cancel","content"?:{…}}}
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
 * written to stderr when GONK_PI_LOG is set.
 *
 * Questions: when Pi has a UI (ctx.hasUI: interactive and RPC mode) each
 * execute says "canAnswer": ["elicitation"], and a tool's question or an
 * approval arrives as a question line, put to the user with Pi's dialogs
 * (answerQuestion below): an approval with ctx.ui.confirm, a form field by
 * field with ctx.ui.input (text, numbers) and ctx.ui.select (an enum, a
 * boolean). A multi-select field is declined (Pi has no such widget), a
 * dismissed dialog cancels the form. Sampling and roots are never asked:
 * Pi's extension API cannot answer them. A bridge that dies turns the calls it was
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
	/** A folder of the registry's skills, for Pi to load. */
	skillsDir?: string;
	warnings: string[];
}

/** A question line of a running call. */
export interface Question {
	id: string;
	callId: string;
	key: string;
	request: { method: string; params?: any };
}

/** An elicitation answer, in the MCP result shape. */
export type Answer = { action: "accept"; content: Record<string, unknown> } | { action: "decline" | "cancel" };

/** The part of Pi's ctx.ui the questions use. */
export interface DialogUI {
	confirm(title: string, message: string, opts?: { signal?: AbortSignal }): Promise<boolean>;
	input(title: string, placeholder?: string, opts?: { signal?: AbortSignal }): Promise<string | undefined>;
	select(title: string, options: string[], opts?: { signal?: AbortSignal }): Promise<string | undefined>;
}

interface Pending {
	resolve(value: any): void;
	reject(error: Error): void;
	onUpdate?: (update: Update) => void;
	/** Puts a call's question to the user; absent when Pi has no UI. */
	onQuestion?: (question: Question, signal: AbortSignal) => Promise<Answer>;
	/** Dismisses the call's open dialogs when it ends. */
	questions?: AbortController;
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

	/**
	 * Runs a tool; resolves with its result, rejects when the bridge dies.
	 * With onQuestion the bridge may ask the user during the call.
	 */
	execute(
		tool: string,
		input: unknown,
		signal: AbortSignal | undefined,
		onUpdate?: (update: Update) => void,
		onQuestion?: (question: Question, signal: AbortSignal) => Promise<Answer>,
	): Promise<ToolResult> {
		if (signal?.aborted) return Promise.resolve(ABORTED);
		const id = `c${++this.nextId}`;
		return new Promise<ToolResult>((resolve, reject) => {
			const onAbort = () => {
				if (this.pending.has(id)) this.write({ type: "abort", id });
			};
			const questions = new AbortController();
			const done = <T>(f: (value: T) => void) => (value: T) => {
				signal?.removeEventListener("abort", onAbort);
				// A dialog still open for this call answers nothing now.
				questions.abort();
				f(value);
			};
			signal?.addEventListener("abort", onAbort, { once: true });
			const message = onQuestion ? { type: "execute", id, tool, input, canAnswer: ["elicitation"] } : { type: "execute", id, tool, input };
			this.request(message, { resolve: done(resolve), reject: done(reject), onUpdate, onQuestion, questions, tool });
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
		if (message?.type === "question") return this.onQuestionLine(message);
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

	/** Asks the user and sends the answer; a call that cannot ask declines. */
	private onQuestionLine(question: Question): void {
		const pending = this.pending.get(question.callId);
		const ask = pending?.onQuestion;
		const signal = pending?.questions?.signal ?? AbortSignal.abort();
		const asked: Promise<Answer> = ask ? ask(question, signal) : Promise.resolve({ action: "decline" });
		asked
			.catch((): Answer => ({ action: "cancel" }))
			.then((answer) => {
				// The call ended (answered elsewhere, timed out, aborted): say nothing.
				if (signal.aborted || !this.child) return;
				this.write({ type: "answer", id: question.id, answer });
			});
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

type Field = { type?: string; title?: string; description?: string; default?: unknown; enum?: unknown[]; enumNames?: string[]; oneOf?: { const: unknown; title?: string }[]; minimum?: number; maximum?: number; minLength?: number; maxLength?: number; items?: unknown };

const YES = "Yes";
const NO = "No";

/**
 * Puts one question to the user with Pi's dialogs and returns the answer
 * in the MCP elicitation result shape. An approval form (one boolean
 * `approve` field) is a confirm: yes accepts, no declines (Pi's confirm
 * cannot tell "no" from a dismissed dialog). Any other form is asked field
 * by field: input for text and numbers (empty takes the default or skips
 * an optional field; a bad number or length is asked again), select for
 * an enum and for a boolean. A dismissed dialog cancels the form; a field
 * Pi cannot render (a multi-select array, an object) declines it, and so
 * does any question that is not an elicitation.
 */
export async function answerQuestion(ui: DialogUI, question: Question, signal?: AbortSignal): Promise<Answer> {
	if (question.request?.method !== "elicitation/create") return { action: "decline" };
	const params = question.request.params ?? {};
	const message: string = typeof params.message === "string" ? params.message : "";
	const schema = params.requestedSchema ?? {};
	const properties: Record<string, Field> = schema.properties ?? {};
	const required = new Set<string>(Array.isArray(schema.required) ? schema.required : []);
	const names = Object.keys(properties);
	const opts = { signal };
	if (names.length === 1 && names[0] === "approve" && properties.approve?.type === "boolean") {
		const yes = await ui.confirm(`${LAUNCH.name}: approve?`, message, opts);
		if (signal?.aborted) return { action: "cancel" };
		return yes ? { action: "accept", content: { approve: true } } : { action: "decline" };
	}
	// Pi renders no multi-select or nested form: refuse before asking anything.
	for (const name of names) {
		const type = properties[name]?.type;
		if (!["string", "number", "integer", "boolean"].includes(type ?? "")) return { action: "decline" };
	}
	const content: Record<string, unknown> = {};
	// Required fields first, as the other surfaces do.
	const order = [...names.filter((n) => required.has(n)), ...names.filter((n) => !required.has(n))];
	for (const name of order) {
		const field = properties[name];
		const label = field.title ?? name;
		const title = `${message ? `${message}\n` : ""}${label}${field.description ? ` (${field.description})` : ""}${required.has(name) ? "" : " [optional]"}`;
		const choices = fieldChoices(field);
		if (choices) {
			const options = choices.map((c) => c.label);
			if (!required.has(name) && field.default === undefined) options.push("(skip)");
			const picked = await ui.select(title, options, opts);
			if (picked === undefined || signal?.aborted) return { action: "cancel" };
			const choice = choices.find((c) => c.label === picked);
			if (choice) content[name] = choice.value;
			continue;
		}
		let hint = field.default !== undefined ? `default: ${field.default}` : field.type === "string" ? "text" : field.type!;
		for (;;) {
			const line = await ui.input(title, hint, opts);
			if (line === undefined || signal?.aborted) return { action: "cancel" };
			const text = line.trim();
			if (text === "") {
				if (field.default !== undefined) content[name] = field.default;
				else if (required.has(name)) {
					hint = `${label} is required`;
					continue;
				}
				break;
			}
			const value = parseField(field, field.type === "string" ? line : text);
			if (typeof value === "object" && value !== null && "error" in value) {
				hint = value.error;
				continue;
			}
			content[name] = value;
			break;
		}
	}
	return { action: "accept", content };
}

/** The options of an enum or boolean field, else undefined. */
function fieldChoices(field: Field): { label: string; value: unknown }[] | undefined {
	if (field.type === "boolean") {
		const yes = { label: YES, value: true };
		const no = { label: NO, value: false };
		return field.default === false ? [no, yes] : [yes, no];
	}
	if (Array.isArray(field.oneOf) && field.oneOf.every((o) => o && "const" in o)) {
		return field.oneOf.map((o) => ({ label: String(o.title ?? o.const), value: o.const }));
	}
	if (Array.isArray(field.enum)) {
		return field.enum.map((value, i) => ({ label: String(field.enumNames?.[i] ?? value), value }));
	}
	return undefined;
}

/** A typed line as the field's value, or why it is not one. */
function parseField(field: Field, text: string): unknown {
	if (field.type === "string") {
		if (field.minLength !== undefined && text.length < field.minLength) return { error: `at least ${field.minLength} characters` };
		if (field.maxLength !== undefined && text.length > field.maxLength) return { error: `at most ${field.maxLength} characters` };
		return text;
	}
	const n = Number(text);
	if (!Number.isFinite(n)) return { error: `${text} is not a number` };
	if (field.type === "integer" && !Number.isInteger(n)) return { error: `${text} is not a whole number` };
	if (field.minimum !== undefined && n < field.minimum) return { error: `at least ${field.minimum}` };
	if (field.maximum !== undefined && n > field.maximum) return { error: `at most ${field.maximum}` };
	return n;
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
			async execute(toolCallId, params, signal, onUpdate, ctx) {
				// Without a UI (print, JSON mode) the bridge asks nothing.
				const ask = ctx?.hasUI ? (question: Question, dismissed: AbortSignal) => answerQuestion(ctx.ui, question, dismissed) : undefined;
				const result = await bridge.execute(spec.name, params, signal, onUpdate as any, ask);
				if (result.isError) failed.add(toolCallId);
				return { content: result.content, details: "details" in result ? result.details : {} } as any;
			},
		});
	}
	// Skills: Pi takes them as folders; the bridge wrote them into one.
	const skillsDir = catalog.skillsDir;
	if (skillsDir) {
		pi.on("resources_discover", () => ({ skillPaths: [skillsDir] }));
	}
	pi.on("tool_result", (event) => {
		if (failed.delete(event.toolCallId)) return { isError: true };
	});
	pi.on("session_shutdown", () => bridge.stop());
}
