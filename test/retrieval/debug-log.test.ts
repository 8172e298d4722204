// CORPUS_DEBUG_MODE: "enables debug routes and verbose logging" (second document part 8;
// issue 18 gap 7). The verbose lines of a question: its plan, each connector's time, the
// scores of the best results; never a word of what the records say, their titles or names,
// nor of the question (the data folder keeps all of these sealed or hashed).
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bearer, connectorsSettled, postJson, tempDir, testApp } from "../helpers";

setDefaultTimeout(120_000);

type App = Awaited<ReturnType<typeof testApp>>;
const DOCS: Record<string, string> = {
  "zorbulax-harbour-lease.md":
    "# Zorbulax harbour lease\n\nThe quillimount warehouse lease at the harbour runs until 2027; rent 4,310 EUR a month, paid to Vantrelle Holdings.\n",
  "pemberwick-invoice.md": "# Pemberwick invoice\n\nPemberwick Ltd invoiced the quillimount repairs: 980 EUR, due in April.\n",
  "team-offsite.md": "# Offsite\n\nThe team offsite is in Lisbon in May; flights booked by Orsolya.\n",
};
/** Words of the records (text, titles, file names) and of the question: none may reach a log line. */
const NEVER_LOGGED = [
  "zorbulax",
  "quillimount",
  "vantrelle",
  "pemberwick",
  "lisbon",
  "orsolya",
  "harbour",
  "warehouse",
  "4,310",
  "lease",
  "offsite",
];

let debugApp: App;
let quietApp: App;
let roots: string;

async function withNotes(env: Record<string, string>): Promise<{ app: App; token: string }> {
  const app = await testApp({ CORPUS_CONNECTOR_ROOTS: roots, ...env });
  const token = (await app.services.auth.issuer.issue("alice", ["corpus:search", "connectors:read", "connectors:write"])).token;
  const added = await app.app.handle(
    postJson("/v1/connectors", { id: "notes", kind: "files", label: "Notes", config: { path: join(roots, "notes") } }, bearer(token)),
  );
  expect(added.status).toBe(200);
  await connectorsSettled(app.services, "alice");
  return { app, token };
}

let debugToken: string;
let quietToken: string;

beforeAll(async () => {
  roots = tempDir("corpus-debug-log-");
  mkdirSync(join(roots, "notes"));
  for (const [name, text] of Object.entries(DOCS)) writeFileSync(join(roots, "notes", name), text);
  ({ app: debugApp, token: debugToken } = await withNotes({ CORPUS_DEBUG_MODE: "true" }));
  ({ app: quietApp, token: quietToken } = await withNotes({}));
});

afterAll(async () => {
  await debugApp?.services.close();
  await quietApp?.services.close();
});

const ask = (app: App, token: string) =>
  app.app.handle(postJson("/v1/query", { q: "zorbulax quillimount lease at the harbour since 2025", top_k: 3 }, bearer(token)));

describe("CORPUS_DEBUG_MODE logs at DEBUG (second document part 8: verbose logging)", () => {
  test("second document part 8: the plan, each connector's time and the scores of the best results, under the request's id", async () => {
    const r = await ask(debugApp, debugToken);
    expect(r.status).toBe(200);
    const answer = (await r.json()) as { results: Array<{ score: number }> };
    expect(answer.results.length).toBeGreaterThan(0);
    await Bun.sleep(20);
    const records = debugApp.logs.records();
    const access = records.find((l) => l.message === "request" && l.path === "/v1/query")!;
    const mine = records.filter((l) => l.logger === "retrieval" && l.request_id === access.request_id);
    expect(mine.map((l) => [l.level, l.message])).toEqual([
      ["DEBUG", "query planned"],
      ["DEBUG", "connector searched"],
      ["DEBUG", "query ranked"],
    ]);
    const [planned, searched, ranked] = mine as any[];
    expect(planned).toMatchObject({
      phrases: 0,
      dates_from: "question",
      date_from: "2025-01-01T00:00:00.000Z",
      connectors: ["notes"],
      per_connector: 3,
    });
    expect(planned.terms).toBeGreaterThanOrEqual(3);
    expect(searched).toMatchObject({ connector: "notes", kind: "files", owner: "user", outcome: "ok" });
    expect(searched.hits).toBeGreaterThan(0);
    expect(searched.ms).toBeGreaterThanOrEqual(0);
    expect(ranked.top.length).toBe(answer.results.length);
    // The scores logged are the scores answered, best first.
    expect(ranked.top.map((t: any) => t.score)).toEqual(answer.results.map((x) => x.score));
    expect(ranked.top[0]).toMatchObject({ rank: 1, connector: "notes", lexical: expect.any(Number), chunk: expect.any(Number) });
    expect(ranked.ms).toBeGreaterThanOrEqual(ranked.embed_ms);
  });

  test("issue 18 gap 7: never the text of a record, its title or file name, nor a word of the question, in any line", async () => {
    await ask(debugApp, debugToken);
    await Bun.sleep(20);
    const all = JSON.stringify(debugApp.logs.records()).toLowerCase();
    expect(all).toContain("query ranked");
    for (const word of NEVER_LOGGED) expect([word, all.includes(word)]).toEqual([word, false]);
  });

  test("without debug mode: no DEBUG line", async () => {
    expect((await ask(quietApp, quietToken)).status).toBe(200);
    await Bun.sleep(20);
    expect(quietApp.logs.records().filter((l) => l.level === "DEBUG")).toEqual([]);
  });
});
