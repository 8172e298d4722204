// One search for both wires: POST /v1/query and MCP corpus_search ask through questions/ask.ts,
// which checks, in one order, whether the request timed out and then whether the asker was
// revoked meanwhile, and archives only an answer that is given.
import { expect, setDefaultTimeout, test } from "bun:test";
import type { SourceRecord } from "../../src/connectors/types";
import { AskRefused, ask } from "../../src/questions/ask";
import { testApp } from "../helpers";
import { askedToo, heldSource } from "../support/held-source";

setDefaultTimeout(60_000);

const USER = "asker-7310";
const record: SourceRecord = {
  id: "r1",
  title: "Dabhol",
  content: "A record about the Dabhol plant and its power purchase agreement.",
  source_url: "https://x.example/r1",
  date: null,
  type: "file",
  path: "r1",
  metadata: {},
};

async function app() {
  const t = await testApp();
  const { token } = await t.services.auth.issuer.issue(USER, ["corpus:search"]);
  const principal = await t.services.auth.authenticate(`Bearer ${token}`, "corpus:search");
  const held = heldSource([record]);
  askedToo(t, "held", "Held", "user", held.connector);
  return { t, principal, held };
}

/** Every token of the user issued until the next second revoked, as a deletion does (D25). */
const revoke = (t: Awaited<ReturnType<typeof testApp>>) => t.services.auth.store.revokeUser(USER, Date.now() + 1000);

const question = { user: USER, question: "Dabhol plant", perConnector: 5, limit: 5 };

test("an answer given is archived, with the ids the archive keeps", async () => {
  const { t, principal, held } = await app();
  held.release();
  const asked = await ask(t.services, { ...question, principal });
  expect(asked.chosen.length).toBe(1);
  expect(asked.queryId).toStartWith("qry_");
  // The question, each chunk given, and each record cited kept whole as it was ranked (D36).
  expect(t.services.archive.rowsOf(USER)).toBe(1 + asked.chosen.length + new Set(asked.chosen.map((x) => x.documentId)).size);
  await t.services.close();
});

/** Asks, revokes the user while the search runs, and returns why the answer was refused (and the archive's rows). */
async function revokedWhileAsking(timedOut?: () => boolean): Promise<{ reason?: string; archived: number }> {
  const { t, principal, held } = await app();
  const pending = ask(t.services, { ...question, principal, ...(timedOut ? { timedOut } : {}) });
  await held.asked;
  revoke(t);
  held.release();
  const refused = await pending.then(
    () => undefined,
    (e: unknown) => e,
  );
  const archived = await t.services.archive.rowsOf(USER);
  await t.services.close();
  return { reason: refused instanceof AskRefused ? refused.reason : undefined, archived };
}

test("timed out and revoked at once: the timeout is said first (both wires ask through ask()), nothing archived", async () => {
  expect(await revokedWhileAsking(() => true)).toEqual({ reason: "timed_out", archived: 0 });
});

test("revoked while the search ran: refused as revoked, nothing archived", async () => {
  expect(await revokedWhileAsking()).toEqual({ reason: "revoked", archived: 0 });
});

test("a connector removed while the search ran answers nothing of it (D25)", async () => {
  const { t, principal, held } = await app();
  // The held source is one of the user's connectors until it is removed.
  let shown = ["held"];
  t.services.connectors.ids = async () => shown;
  const pending = ask(t.services, { ...question, principal });
  await held.asked;
  shown = [];
  held.release();
  const asked = await pending;
  expect(asked.chosen).toEqual([]);
  expect(asked.outcome.chunks).toEqual([]);
  await t.services.close();
});

test("a connector kept while the search ran answers as before", async () => {
  const { t, principal, held } = await app();
  t.services.connectors.ids = async () => ["held"];
  const pending = ask(t.services, { ...question, principal });
  await held.asked;
  held.release();
  expect((await pending).chosen.length).toBe(1);
  await t.services.close();
});
