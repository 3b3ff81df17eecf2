// Opens the notes page (`notes serve` with the diagnostic tools) in Debian's
// headless Chromium, driven by playwright-core, and answers the questions a
// call asks (#28): `diag.ask` sends an order form, which the page renders
// from its schema; the script fills it in and submits, then declines a
// second one. Prints what it observed as one JSON object on stdout; the
// Rust test (tests/tests/ws/asking.rs) makes the assertions.
//
// usage: node browser_ask.mjs PAGE_URL API_KEY

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";

const [pageUrl, key] = process.argv.slice(2);
const WAIT = 30000;
const report = { console: [] };

const userDataDir = mkdtempSync(join(tmpdir(), "gonk-ask-chromium-"));
const context = await chromium.launchPersistentContext(userDataDir, {
  executablePath: "/usr/bin/chromium",
  headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
});

try {
  const page = await context.newPage();
  page.on("console", (message) => {
    if (message.type() === "error") report.console.push(message.text());
  });
  page.on("pageerror", (error) => report.console.push(String(error)));
  await page.goto(pageUrl + "#key=" + encodeURIComponent(key));
  await page.waitForSelector('body[data-ready="1"]', { timeout: WAIT });

  // The page's own call(): its requests say it can answer forms.
  await page.evaluate(() => { window.asked = call("diag.ask", {}); });
  const form = page.locator(".question").first();
  await form.waitFor({ timeout: WAIT });
  report.message = await form.locator("p").textContent();
  report.labels = await form.locator("label span").allTextContents();
  report.size_options = await form.locator('select[name="size"] option').allTextContents();
  await form.locator('input[name="count"]').fill("3");
  await form.locator('input[name="name"]').fill("Page");
  await form.locator('select[name="size"]').selectOption("large");
  await form.locator('input[name="gift"]').check();
  await form.locator('button[data-answer="submit"]').click();
  report.accepted = await page.evaluate(() => window.asked);
  report.forms_after_answer = await page.locator(".question").count();

  await page.evaluate(() => { window.asked = call("diag.ask", {}); });
  await page.locator(".question").first().waitFor({ timeout: WAIT });
  await page.locator('.question button[data-answer="decline"]').click();
  report.declined = await page.evaluate(() => window.asked);
  report.forms_after_decline = await page.locator(".question").count();
} catch (error) {
  report.failure = String(error && error.stack ? error.stack : error);
} finally {
  await context.close();
  rmSync(userDataDir, { recursive: true, force: true });
}
console.log(JSON.stringify(report));
