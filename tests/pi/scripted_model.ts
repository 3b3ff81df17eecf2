/**
 * A test-only Pi extension: a scripted, offline model for the Pi adapter
 * tests. It registers pi-ai's faux provider (`registerFauxProvider`) and
 * hands it to Pi with `pi.registerProvider` under another api id (Pi
 * registers the provider's `streamSimple` under the api id it is given; the
 * faux provider's own id would make that call itself).
 *
 * The script comes in $GONK_PI_SCRIPT:
 *   {"turns": [[{"tool": "fixture_echo", "args": {...}}, ...], ...],
 *    "abortOn": "fixture_slow"}
 * Each turn is one assistant message calling the listed tools; after the
 * last turn the model answers "done". With `abortOn`, the first update or
 * log line of that tool (by Pi name) aborts the agent (Pi's Escape), through
 * the extension context: the handler is running by then. The tools' log
 * lines (the gonk-tools extension's "gonk-tools:log" events) are appended
 * to $GONK_PI_LOG_FILE as JSON lines when it is set.
 */
import { appendFileSync } from "node:fs";
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { fauxAssistantMessage, fauxText, fauxToolCall, registerFauxProvider, streamSimple } from "@mariozechner/pi-ai";

interface Script {
	turns: { tool: string; args: Record<string, unknown> }[][];
	abortOn?: string;
}

export default function scriptedModel(pi: ExtensionAPI) {
	const script: Script = JSON.parse(process.env.GONK_PI_SCRIPT ?? '{"turns": []}');
	const faux = registerFauxProvider({ api: "gonk-faux-inner", provider: "gonk-faux-inner", models: [{ id: "scripted" }] });
	faux.setResponses([
		...script.turns.map((calls, turn) =>
			fauxAssistantMessage(
				calls.map((call, i) => fauxToolCall(call.tool, call.args, { id: `call-${turn}-${i}` })),
				{ stopReason: "toolUse" },
			),
		),
		fauxAssistantMessage(fauxText("done")),
	]);
	pi.registerProvider("gonk-faux", {
		baseUrl: "http://faux.invalid",
		apiKey: "unused",
		api: "gonk-faux",
		models: [
			{
				id: "scripted",
				name: "Scripted",
				reasoning: false,
				input: ["text"],
				cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
				contextWindow: 128000,
				maxTokens: 16384,
			},
		],
		streamSimple: (model, context, options) => streamSimple({ ...model, api: faux.api } as any, context, options),
	});
	// The latest extension context, for aborting from an event-bus handler.
	let abort: (() => void) | undefined;
	pi.on("tool_execution_start", (_event, ctx) => {
		abort = () => ctx.abort();
	});
	pi.on("tool_execution_update", (event, ctx) => {
		if (script.abortOn && event.toolName === script.abortOn) ctx.abort();
	});
	pi.events.on("gonk-tools:log", (entry: any) => {
		if (process.env.GONK_PI_LOG_FILE) appendFileSync(process.env.GONK_PI_LOG_FILE, `${JSON.stringify(entry)}\n`);
		if (script.abortOn && entry.piName === script.abortOn) abort?.();
	});
}
