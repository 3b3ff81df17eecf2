// Puts bridge questions to a stub of Pi's ctx.ui through the generated
// extension's own answerQuestion (loaded with jiti, as Pi loads it), for
// cases read from the JSON file named by argv[3]:
// [{"name", "question": {id, callId, key, request}, "replies": [...]}],
// where each reply is what the next dialog returns (null: dismissed).
// Prints one JSON array: [{"name", "answer", "dialogs": [{method, title, detail}]}].
import { readFileSync } from "node:fs";
import { createJiti } from "jiti";

const jiti = createJiti(import.meta.url);
const extension = await jiti.import(process.argv[2]);
const cases = JSON.parse(readFileSync(process.argv[3], "utf8"));
const results = [];
for (const { name, question, replies } of cases) {
	const dialogs = [];
	const next = (method, title, detail) => {
		dialogs.push({ method, title, detail });
		if (replies.length === 0) throw new Error(`no reply scripted for ${method} ${title}`);
		const reply = replies.shift();
		return Promise.resolve(reply === null ? undefined : reply);
	};
	const ui = {
		confirm: (title, message) => next("confirm", title, message).then((r) => r === true),
		input: (title, placeholder) => next("input", title, placeholder),
		select: (title, options) => next("select", title, options),
	};
	let answer;
	try {
		answer = await extension.answerQuestion(ui, question);
	} catch (error) {
		answer = { thrown: String(error?.message ?? error) };
	}
	results.push({ name, answer, dialogs, unused: replies.length });
}
console.log(JSON.stringify(results));
