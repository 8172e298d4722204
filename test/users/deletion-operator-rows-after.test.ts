// An operator row a question meets for the first time is embedded in the background under the
// ASKING user (score.ts denseScore, D25). A question in flight while its user is deleted queues
// that job after the deletion (its connectors answered late), in the owner's new generation, with
// nothing to say it belongs to the deleted account: the answer is refused (401) and the archive
// writes nothing, but the job waits in the background queue and, once the same user id is back
// and an answer made them a new key, stores the deleted account's vectors under it. Their next
// answers then rank the row by meaning, without "seen for the first time": a trace of what the
// deleted account asked (D13/D25: nothing of a deleted user's written after). No model: the
// worker is a stand-in whose background runs the test lets through.
import { expect, setDefaultTimeout, test } from "bun:test";
import type { SourceRecord } from "../../src/connectors/types";
import { EMBEDDING_DIM } from "../../src/embedding/embedder";
import type { EmbedJob } from "../../src/embedding/worker-client";
import { embeddingText, recordChunks } from "../../src/retrieval/chunk";
import { bearer, postJson, req } from "../helpers";
import { appPerTest } from "../support/app-per-test";
import { askedToo, heldSource } from "../support/held-source";

setDefaultTimeout(60_000);
const app = appPerTest();
const USER = "returner-7731";

test("a deleted user's late question does not cache the operator rows it met under the key they get when they come back", async () => {
  let at = Date.now();
  const t = await app({}, () => at);
  // The model's stand-in: questions answered at once, background jobs held until let through.
  let letThrough!: () => void;
  const background = new Promise<void>((r) => (letThrough = r));
  const vector = () => new Float32Array(EMBEDDING_DIM).fill(0.1);
  const worker = {
    alive: true,
    async embed(texts: string[]) {
      return texts.map(vector);
    },
    async run(job: EmbedJob) {
      await background;
      job.texts.forEach((_, i) => job.set(i, vector()));
    },
  };
  (t.services.embeddings as unknown as { load(): Promise<unknown> }).load = () => Promise.resolve(worker);

  // The operator's live source (SQL, IMAP: no index of its own), answering the first search late.
  const row: SourceRecord = {
    id: "deal/9",
    title: "Globex merger",
    content: "The confidential merger with Globex is planned for the third quarter.",
    source_url: "https://crm.example/deal/9",
    date: null,
    type: "file",
    path: "deal/9",
    metadata: {},
  };
  const crm = heldSource([row], { once: true });
  askedToo(t, "crm", "CRM", "operator", crm.connector);

  try {
    const first = (await t.services.auth.issuer.issue(USER, ["corpus:search", "connectors:write"])).token;
    const question = t.app.handle(postJson("/v1/query", { query: "Globex merger" }, bearer(first)));
    await crm.asked;
    expect((await t.app.handle(req("/v1/delete_my_data", { method: "DELETE", headers: bearer(first) }))).status).toBe(200);
    crm.release();
    expect((await question).status).toBe(401);

    // The same user id back (a local account keeps its sign-in; a new token, issued after the
    // deletion), asking about something else: the answer makes their new key.
    at += 2_000;
    const again = (await t.services.auth.issuer.issue(USER, ["corpus:search"])).token;
    expect((await t.app.handle(postJson("/v1/query", { query: "weather in Lisbon" }, bearer(again)))).status).toBe(200);
    expect(t.services.userKeys.existingKeyFor(USER)).toBeDefined();
    letThrough();
    await t.services.embeddings.idle();

    // Their new account holds nothing the deleted one asked: the row is seen for the first time.
    const texts = recordChunks(row, t.services.embeddings.tokenizer).map((c) => embeddingText(row.title, c));
    expect(t.services.embeddings.cached(USER, texts).filter(Boolean).length).toBe(0);
  } finally {
    // Never left held: the app's close waits for the background job.
    letThrough();
  }
});
