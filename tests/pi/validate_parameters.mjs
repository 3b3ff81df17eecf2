// Runs Pi's own argument validator (pi-ai's validateToolArguments, what Pi
// calls before a tool's execute) over cases read from the JSON file named
// by argv[2]: [{"name": ..., "parameters": {...}, "args": {...}}, ...].
// Prints one JSON array: [{"name": ..., "ok": bool, "error"?: string}].
import { readFileSync } from "node:fs";
import { validateToolArguments } from "@mariozechner/pi-ai";

const cases = JSON.parse(readFileSync(process.argv[2], "utf8"));
const results = cases.map(({ name, parameters, args }) => {
	try {
		validateToolArguments({ name, description: "", parameters }, { type: "toolCall", id: "t", name, arguments: args });
		return { name, ok: true };
	} catch (error) {
		return { name, ok: false, error: String(error?.message ?? error) };
	}
});
console.log(JSON.stringify(results));
