// The operator's SQL connector has its newest rows embedded ahead once, when it starts (README:
// "so that the first questions rank them by meaning too"). Its cache is bounded by when each vector
// was stored, oldest first, and questions of any user store the operator rows they meet there too:
// one user's questions about older rows push the newest rows' vectors out, and nothing embeds them
// ahead again while the server runs, so another user's first question about them is ranked by words.
import { expect, setDefaultTimeout, test } from "bun:test";
import { NEWEST_ROW_BYTES } from "../../src/connectors/sql/connector";
import { bearer, connectorsSettled, postJson } from "../helpers";
import { appPerTest } from "../support/app-per-test";
import { operatorSqliteTable } from "../support/sources";

setDefaultTimeout(120_000);
const app = appPerTest();

test("alice's questions about older operator rows do not undo the newest rows' embedding ahead for bob", async () => {
  const harbour = Array.from({ length: 6 }, (_, k): [string, string] => [
    `harbour report ${k + 1}`,
    `The harbour crane number ${k + 1} was repaired on time.`,
  ]);
  // Longer than what embedding ahead reads at once: embedded when a question meets them.
  const merger = "The confidential merger with Globex is planned for the third quarter. ";
  const mergers = [7, 8, 9].map((i): [string, string] => [`merger ${i}`, merger.repeat(Math.ceil((NEWEST_ROW_BYTES * 2) / merger.length))]);
  let at = Date.now();
  const t = await app(operatorSqliteTable("crm", "note", [...harbour, ...mergers]), () => at);
  // The bound made small (100,000 vectors would take hours to reach here); same policy.
  (t.services.embeddings as unknown as { options: { cachedPerOwner: number } }).options.cachedPerOwner = 10;
  const alice = await t.services.auth.issuer.issue("alice", ["corpus:search", "connectors:read"]);
  const bob = await t.services.auth.issuer.issue("bob", ["corpus:search", "connectors:read"]);
  const ask = async (token: string, query: string) => {
    const r = await t.app.handle(postJson("/v1/query", { query }, bearer(token)));
    expect(r.status).toBe(200);
    return ((await r.json()) as { search_summary: { notes?: string[] } }).search_summary.notes ?? [];
  };
  const firstSeen = (notes: string[]) => notes.some((n) => n.includes("ranked by their words"));

  await connectorsSettled(t.services, "alice");
  await t.services.embeddings.idle();
  at += 60_000;
  await ask(alice.token, "Globex merger");
  await t.services.embeddings.idle();
  at += 60_000;
  await connectorsSettled(t.services, "bob");
  await t.services.embeddings.idle();

  // The newest rows were embedded ahead: bob's first question about them ranks them by meaning.
  expect(firstSeen(await ask(bob.token, "harbour crane repaired"))).toBe(false);
});
