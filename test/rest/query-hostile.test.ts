// Attack: POST /v1/query with hostile bodies and questions. A question can name a day at the end
// of what a Date holds ("in N days", N reaching +275760-09-13): the plan's exclusive end is one
// day later, an Invalid Date, and every toISOString of it (rank.ts's SQL params, the DEBUG line)
// throws. Also: filters at the edges of the calendar, another user's connector ids.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bearer, connectorsSettled, postJson, tempDir, testApp } from "../helpers";

setDefaultTimeout(120_000);

type App = Awaited<ReturnType<typeof testApp>>;
let t: App;
let alice: string;
let bob: string;

const mailText = (id: string, subject: string, body: string) =>
  `Message-ID: <${id}@example.com>\r\nFrom: jeff@example.com\r\nTo: alice@example.com\r\nDate: Tue, 12 Jun 2001 10:00:00 +0000\r\nSubject: ${subject}\r\n\r\n${body}\r\n`;

beforeAll(async () => {
  const roots = tempDir("corpus-hostile-roots-");
  for (const user of ["alice", "bob"]) {
    const dir = join(roots, user, "mail", "cur");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `1.${user}:2,S`), mailText(`${user}-1`, "Harbour audit", `The harbour audit of ${user} is due on Friday.`));
  }
  t = await testApp({ CORPUS_CONNECTOR_ROOTS: join(roots, "{user}"), CORPUS_DEBUG_MODE: "true" });
  alice = (await t.services.auth.issuer.issue("alice", ["corpus:search", "connectors:read", "connectors:write"])).token;
  bob = (await t.services.auth.issuer.issue("bob", ["corpus:search", "connectors:read", "connectors:write"])).token;
  for (const [user, token] of [
    ["alice", alice],
    ["bob", bob],
  ] as const) {
    const id = user === "alice" ? "mail" : "bobmail";
    const r = await t.app.handle(
      postJson("/v1/connectors", { id, kind: "maildir", config: { path: join(roots, user, "mail") } }, bearer(token)),
    );
    expect(r.status).toBe(200);
    await connectorsSettled(t.services, user);
  }
});

afterAll(async () => {
  await t?.services.close();
});

const query = (body: unknown, tok = alice) => t.app.handle(postJson("/v1/query", body, bearer(tok)));

test("attack: a question naming the last day a Date holds is answered, not a failed connector nor a throw (DEBUG line)", async () => {
  // The question's clock at midnight UTC: "in N days" is then exactly the last instant a Date
  // holds (+275760-09-13T00:00Z), and the plan's exclusive end one day later is Invalid.
  const now = new Date(Date.UTC(2026, 0, 1));
  const days = Math.floor((8.64e15 - now.getTime()) / 86_400_000);
  const outcome = await t.services.query.run({ user: "alice", question: `harbour audit mails in ${days} days`, perConnector: 10, now });
  expect(outcome.notes.filter((n) => n.startsWith("mail:"))).toEqual([]);
  expect(outcome.chunks.map((c) => c.record.metadata.message_id)).toEqual(["<alice-1@example.com>"]);
});

test("filters at the calendar's edges are answered or refused with 400, never 500", async () => {
  for (const filters of [
    { date_from: "0000-01-01" },
    { date_to: "9999-12-31" },
    { date_from: "0000-01-01", date_to: "9999-12-31" },
    { date_from: "9999-12-31T23:59:59.999Z" },
    { date_to: "0000-01-01T00:00:00.000+23:59" },
    { date_from: "+275760-09-13" },
    { date_to: "275760-09-13" },
    { date_from: "2001-02-29" },
    { date_from: "2001-06-01T24:00" },
    { date_from: "2001-06-01", date_to: "2001-06-01" },
    { date_from: "2001-06-02", date_to: "2001-06-01" },
  ]) {
    const r = await query({ q: "harbour audit", filters });
    expect({ filters, ok: [200, 400].includes(r.status) }).toEqual({ filters, ok: true });
  }
});

test("attack: date_to 9999-12-31 (no end, as clients write it) finds the records of any date", async () => {
  // The end is 10000-01-01, whose ISO form is "+010000-01-01T…": compared as text with a record's
  // "2001-06-12T…" it is smaller, and nothing is ever before it.
  for (const filters of [{ date_from: "0000-01-01" }, { date_to: "9999-12-31" }, { date_from: "0000-01-01", date_to: "9999-12-31" }]) {
    const r = await query({ q: "harbour audit", filters });
    expect(r.status).toBe(200);
    const ids = ((await r.json()) as any).results.map((x: any) => x.source.message_id);
    expect({ filters, ids }).toEqual({ filters, ids: ["<alice-1@example.com>"] });
  }
});

test("another user's connector id is unknown (400), and its records are never in the answer", async () => {
  for (const body of [
    { query: "harbour audit", connectors: ["bobmail"] },
    { q: "harbour audit", filters: { connectors: ["mail", "bobmail"] } },
  ]) {
    const r = await query(body);
    expect(r.status).toBe(400);
    expect(await r.text()).not.toContain("bob-1");
  }
  const r = await query({ query: "harbour audit of bob", max_results: 100 });
  expect(r.status).toBe(200);
  const text = await r.text();
  expect(text).toContain("alice-1");
  expect(text).not.toContain("bob-1");
});

test("nested or oversized filters are refused with 400", async () => {
  for (const body of [
    { q: "harbour", filters: { connectors: [["mail"]] } },
    { q: "harbour", filters: { connectors: Array.from({ length: 101 }, (_, i) => `c${i}`) } },
    { q: "harbour", filters: { date_from: { $gt: "2001" } } },
    { q: "harbour", filters: { nested: { filters: {} } } },
    { q: "harbour", filters: { date_from: "2".repeat(41) } },
    { q: "harbour", filters: { connectors: ["../bob/mail"] } },
    { q: "harbour", filters: [] },
  ]) {
    const r = await query(body);
    expect({ body, status: r.status }).toEqual({ body, status: 400 });
  }
});
