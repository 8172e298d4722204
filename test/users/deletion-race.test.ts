// A question in flight while its user is deleted (D25): the deletion marks the user (revokes
// their tokens) first; the question, when its connectors answer, writes nothing: no archive
// row, no conversation, no cached vector, and no new key of the deleted user.
import { expect, setDefaultTimeout, test } from "bun:test";
import type { SourceRecord } from "../../src/connectors/types";
import { bearer, postJson, req, testApp } from "../helpers";
import { askedToo, heldSource } from "../support/held-source";

setDefaultTimeout(60_000);

const USER = "racer-5521";

test("a query racing a deletion leaves no row and no key of the user", async () => {
  const t = await testApp();
  const token = (await t.services.auth.issuer.issue(USER, ["corpus:search", "connectors:write"])).token;

  // A source that answers only when the test lets it: the deletion runs while it waits.
  const record: SourceRecord = {
    id: "r1",
    title: "Late answer",
    content: "A record about the Dabhol plant.",
    source_url: "https://x.example/r1",
    date: null,
    type: "file",
    path: "r1",
    metadata: {},
  };
  const slow = heldSource([record]);
  askedToo(t, "slow", "Slow", "user", slow.connector);

  const query = t.app.handle(postJson("/v1/query", { query: "Dabhol plant", conversation_id: null }, bearer(token)));
  await slow.asked;
  const deleted = await t.app.handle(req("/v1/delete_my_data", { method: "DELETE", headers: bearer(token) }));
  expect(deleted.status).toBe(200);
  slow.release();
  const answer = await query;
  expect(answer.status).toBe(401);
  // Background work the question started (its records' vectors) settles without writing.
  await t.services.embeddings.idle();

  const tables = t.db.query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table'").all();
  const left: string[] = [];
  for (const { name } of tables) {
    const cols = t.db
      .query<{ name: string }, []>(`PRAGMA table_info("${name}")`)
      .all()
      .map((c) => c.name);
    for (const col of cols.filter((c) => ["user_id", "owner"].includes(c))) {
      const n = t.db.query<{ n: number }, [string]>(`SELECT count(*) AS n FROM "${name}" WHERE "${col}" = ?`).get(USER)!.n;
      if (n) left.push(`${name}.${col}: ${n}`);
    }
  }
  expect(left).toEqual([]);
  expect(t.services.userKeys.existingKeyFor(USER)).toBeUndefined();
  await t.services.close();
});

test("a question still being embedded when its user is deleted stores no vector and makes no key", async () => {
  const t = await testApp();
  const token = (await t.services.auth.issuer.issue(USER, ["corpus:search", "corpus:read", "connectors:write"])).token;
  // The user exists (an answer made their key), then the model is held while the deletion runs.
  expect((await t.app.handle(postJson("/v1/query", { query: "first question" }, bearer(token)))).status).toBe(200);
  const service = t.services.embeddings as unknown as { load(): Promise<{ embed(texts: string[]): Promise<Float32Array[]> }> };
  const model = await service.load();
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let started!: () => void;
  const inModel = new Promise<void>((r) => (started = r));
  const realEmbed = model.embed.bind(model);
  model.embed = async (texts) => {
    started();
    await gate;
    return realEmbed(texts);
  };
  const pending = t.app.handle(postJson("/v1/query", { query: "a second question" }, bearer(token)));
  await inModel;
  expect((await t.app.handle(req("/v1/delete_my_data", { method: "DELETE", headers: bearer(token) }))).status).toBe(200);
  release();
  expect((await pending).status).toBe(401);
  model.embed = realEmbed;
  expect(t.db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM embedding_cache WHERE owner = ?").get(USER)!.n).toBe(0);
  expect(t.services.userKeys.existingKeyFor(USER)).toBeUndefined();
  await t.services.close();
});
