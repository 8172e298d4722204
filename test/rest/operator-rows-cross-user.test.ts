// Two users of one server, the operator's SQL connector shared by both (CORPUS_CONNECTORS_FILE).
// A row embedding ahead skips (over NEWEST_ROW_BYTES) is embedded the first time a question meets
// it, under the operator's cache key: the next user's answer then shows that someone asked about
// it before (no "ranked by their words" note, a different ranking), which one user's question must
// never tell another (D25: cached vectors belong to their user; README "Every vector is cached per owner").
import { expect, setDefaultTimeout, test } from "bun:test";
import { NEWEST_ROW_BYTES } from "../../src/connectors/sql/connector";
import { bearer, connectorsSettled, postJson } from "../helpers";
import { appPerTest } from "../support/app-per-test";
import { operatorSqliteTable } from "../support/sources";

setDefaultTimeout(120_000);
const app = appPerTest();

test("bob's answer about an operator row does not reveal that alice asked about the same row before him", async () => {
  // The merger's note is longer than what embedding ahead reads at once: embedded only when a question meets it.
  const merger = "The confidential merger with Globex is planned for the third quarter. ";
  const notes: Array<[string, string]> = [
    ["short note", "a short note about the weather"],
    ["merger", merger.repeat(Math.ceil((NEWEST_ROW_BYTES * 2) / merger.length))],
  ];
  const t = await app(operatorSqliteTable("crm", "note", notes));
  const alice = await t.services.auth.issuer.issue("alice", ["corpus:search", "connectors:read"]);
  const bob = await t.services.auth.issuer.issue("bob", ["corpus:search", "connectors:read"]);
  const ask = async (token: string) => {
    const r = await t.app.handle(postJson("/v1/query", { query: "Globex merger" }, bearer(token)));
    expect(r.status).toBe(200);
    const body = (await r.json()) as {
      results: Array<{ chunks: Array<{ metadata: { path: string } }> }>;
      search_summary: { notes?: string[] };
    };
    return { paths: body.results.flatMap((g) => g.chunks.map((c) => c.metadata.path)), notes: body.search_summary.notes };
  };
  await connectorsSettled(t.services, "alice");
  await t.services.embeddings.idle();

  // What bob is answered when nobody asked before him: the long row seen for the first time.
  const firstSeen = (notes: string[] = []) => notes.some((n) => n.includes("ranked by their words"));
  const aliceAnswer = await ask(alice.token);
  expect(aliceAnswer.paths).toContain("note/2");
  expect(firstSeen(aliceAnswer.notes)).toBe(true);
  await t.services.embeddings.idle();

  // Bob never asked: his answer must be what it would be had alice not asked either.
  const bobAnswer = await ask(bob.token);
  expect(bobAnswer.paths).toContain("note/2");
  expect(firstSeen(bobAnswer.notes)).toBe(true);
});
