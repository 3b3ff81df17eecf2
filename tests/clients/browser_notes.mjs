// Opens the notes page (`notes serve`, at /) twice in Debian's headless
// Chromium, driven by playwright-core (npm; no browser download), creates a
// note in one page, waits for it to appear in the other, searches, and
// prints what it observed as one JSON object on stdout. The Rust test
// (tests/tests/ws/notes_browser.rs) makes the assertions.
//
// usage: node browser_notes.mjs PAGE_URL API_KEY

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";

const [pageUrl, key] = process.argv.slice(2);
const WAIT = 30000;
const report = { console: [] };

const userDataDir = mkdtempSync(join(tmpdir(), "gonk-notes-chromium-"));
const context = await chromium.launchPersistentContext(userDataDir, {
  executablePath: "/usr/bin/chromium",
  headless: true,
  args: [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
});

async function open(withKey) {
  const page = await context.newPage();
  page.on("console", (message) => {
    if (message.type() === "error") report.console.push(message.text());
  });
  page.on("pageerror", (error) => report.console.push(String(error)));
  await page.goto(pageUrl + (withKey ? "#key=" + encodeURIComponent(key) : ""));
  return page;
}

const titles = (page, list) =>
  page.$$eval(`#${list} li .title`, (items) => items.map((item) => item.textContent));

async function create(page, title, body, tags) {
  await page.fill("#title", title);
  await page.fill("#body", body);
  await page.fill("#tags", tags);
  await page.click("#create");
}

async function waitForNote(page, title) {
  await page
    .locator("#notes li .title", { hasText: title })
    .first()
    .waitFor({ timeout: WAIT });
}

try {
  const a = await open(true);
  const b = await open(true);
  for (const page of [a, b]) {
    await page.waitForSelector('#status[data-state="connected"]', { timeout: WAIT });
    await page.waitForSelector('body[data-ready="1"]', { timeout: WAIT });
  }
  report.initial = { a: await titles(a, "notes"), b: await titles(b, "notes") };

  // Created in A, appears in B without a reload (a broadcast).
  await create(a, "Browser note", "written in page A", "browser, live");
  await waitForNote(a, "Browser note");
  await waitForNote(b, "Browser note");
  report.b_after_a_created = await titles(b, "notes");
  report.b_meta = await b.locator("#notes li", { hasText: "Browser note" }).locator(".meta").textContent();

  // And the other way round; markup in a title stays text.
  const hostile = '<img src=x onerror="window.pwned=1">';
  await create(b, hostile, "", "");
  await waitForNote(a, hostile);
  report.a_after_b_created = await titles(a, "notes");
  report.a_images = await a.locator("#notes img").count();
  report.a_pwned = await a.evaluate(() => window.pwned === 1);

  // Search in B.
  await b.fill("#query", "browser");
  await b.click("#search");
  await b.locator("#results li").first().waitFor({ timeout: WAIT });
  report.search_titles = await titles(b, "results");
  report.search_summary = await b.textContent("#results-summary");
  await b.fill("#query", "no-such-words");
  await b.click("#search");
  await b.locator("#results-summary", { hasText: "No notes match" }).waitFor({ timeout: WAIT });
  report.search_none_summary = await b.textContent("#results-summary");
  report.search_none_count = await b.locator("#results li").count();

  // An invalid search shows the server's validation error.
  await b.fill("#query", "");
  await b.click("#search");
  await b.locator("#error", { hasText: "INVALID_INPUT" }).waitFor({ timeout: WAIT });
  report.empty_search_error = await b.textContent("#error");

  // A reload lists what was created (notes.list).
  await a.reload();
  await a.waitForSelector('body[data-ready="1"]', { timeout: WAIT });
  report.a_after_reload = await titles(a, "notes");

  // Without the key, the socket is refused and the page says so.
  const c = await open(false);
  await c.waitForSelector('#status[data-state="disconnected"]', { timeout: WAIT });
  report.no_key_status = await c.textContent("#status");
  report.no_key_error = await c.textContent("#error");
} catch (error) {
  report.failure = String(error && error.stack ? error.stack : error);
} finally {
  await context.close();
  rmSync(userDataDir, { recursive: true, force: true });
}
console.log(JSON.stringify(report));
