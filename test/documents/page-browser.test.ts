// A citation's page, /d/<id> (D36), in headless Chromium as its owner opens it from an
// assistant's answer: the cited passage marked, its sha256 and the document's readable inside
// the page's card on a phone's width and a desktop's (a 64-digit hash is one unbroken word), no
// script run and no CSP violation, a user's markup shown as text. Screenshots in
// test-output/documents/.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { createLogger, memorySink } from "../../src/log";
import { type Running, startServer } from "../../src/server";
import { connectorsSettled, tempDir, testConfig } from "../helpers";
import { launchChromium } from "../support/chromium";

setDefaultTimeout(120_000);

const OUTPUT = join(import.meta.dir, "../../test-output/documents");
const NOTE = "Quote <script>alert(1)</script> for the harbour crane inspection: 2,400 EUR & a long tail of terms.";

let running: Running;
let browser: Browser;
let token: string;
let cited: { url: string; sha256: string };

beforeAll(async () => {
  mkdirSync(OUTPUT, { recursive: true });
  const roots = tempDir("corpus-document-page-");
  mkdirSync(join(roots, "alice", "docs"), { recursive: true });
  writeFileSync(join(roots, "alice", "docs", "crane-quote.txt"), NOTE);
  running = await startServer(
    testConfig({ CORPUS_PORT: "0", CORPUS_CONNECTOR_ROOTS: join(roots, "{user}") }),
    createLogger("ERROR", memorySink().sink),
  );
  token = (await running.services.auth.issuer.issue("alice", ["corpus:search", "corpus:read"])).token;
  await running.services.connectors.add("alice", { id: "docs", kind: "files", config: { path: join(roots, "alice", "docs") } });
  await connectorsSettled(running.services, "alice");
  const r = await fetch(`${running.url}/v1/query`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ query: "harbour crane inspection quote", conversation_id: null }),
  });
  expect(r.status).toBe(200);
  cited = ((await r.json()) as { sources: Array<{ url: string; sha256: string }> }).sources[0]!;
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await running?.stop();
});

describe("a citation's page in Chromium", () => {
  for (const [name, viewport] of [
    ["phone", { width: 360, height: 740 }],
    ["desktop", { width: 1280, height: 800 }],
  ] as const) {
    test(`on a ${name}'s width: the passage marked, both hashes inside the card, nothing wider than the window`, async () => {
      const context = await browser.newContext({ viewport, extraHTTPHeaders: { authorization: `Bearer ${token}` } });
      try {
        const page = await context.newPage();
        const reported: string[] = [];
        page.on("console", (m) => reported.push(m.text()));
        page.on("dialog", (d) => reported.push(`dialog: ${d.message()}`));
        // The citation as given: it names the port the test server took (D36).
        const opened = await page.goto(cited.url);
        expect(opened?.status()).toBe(200);
        expect(await page.locator("mark#cited").textContent()).toBe(NOTE);
        const hashes = page.locator("code");
        expect(await hashes.allTextContents()).toContain(cited.sha256);
        const card = (await page.locator("main").boundingBox())!;
        for (const box of await Promise.all((await hashes.all()).map((h) => h.boundingBox())))
          expect(box!.x + box!.width).toBeLessThanOrEqual(card.x + card.width + 0.5);
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(viewport.width);
        await page.screenshot({ path: join(OUTPUT, `cited-${name}.png`), fullPage: true });
        expect(reported).toEqual([]);
      } finally {
        await context.close();
      }
    });
  }
});
