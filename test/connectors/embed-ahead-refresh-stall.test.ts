// Embedding ahead runs again AHEAD_REFRESH_MS after a try that embedded all (registry.ts), and
// "a try over rows already cached costs their reading and a lookup each" (embed-ahead.ts). Those
// lookups are no background work: a page whose vectors are all cached is answered by embed()
// without a turn of the event loop, so the whole pass over the newest 5,000 rows (cutting each
// into chunks, a keyed hash, a read and an unsealing per chunk) runs in one go on the request
// thread, every 15 minutes, and every request waits for it. The SQL read before it turns the loop
// every WINDOW_MS (20 ms); the pages after it should too (AHEAD_PAGE: "questions' own vectors take
// their turns between pages").
import { expect, setDefaultTimeout, test } from "bun:test";
import { AHEAD_RECORDS, AHEAD_REFRESH_MS } from "../../src/connectors/embed-ahead";
import { bearer, req } from "../helpers";
import { appPerTest } from "../support/app-per-test";
import { FREE_SHARE, turnsWhile } from "../support/event-loop";
import { operatorSqliteTable } from "../support/sources";
import { vectorsWithoutModel } from "../support/vectors-without-model";

setDefaultTimeout(60_000);
const app = appPerTest();

test("a refresh of embedding ahead over rows already cached gives the event loop its turns", async () => {
  // A shop's newest orders, each under NEWEST_ROW_BYTES (read ahead), a few chunks each.
  const shop = Array.from({ length: AHEAD_RECORDS }, (_, k): [string, string] => [
    `order ${k + 1}`,
    `Order ${k + 1} of customer ${(k + 1) % 97} shipped to warehouse ${(k + 1) % 13}: ${"widgets gadgets ".repeat(110)}`,
  ]);
  let at = Date.now();
  const t = await app(operatorSqliteTable("shop", "orders", shop), () => at);
  // The first try's vectors stored as the model would (~70 s of one core without this): the
  // operator's cache then holds every newest row, as after any try that embedded all.
  const withoutModel = vectorsWithoutModel(t.services.embeddings);
  const alice = await t.services.auth.issuer.issue("alice", ["connectors:read"]);
  const list = async () => expect((await t.app.handle(req("/v1/connectors", { headers: bearer(alice.token) }))).status).toBe(200);
  await list();
  await t.services.connectors.embeddedAhead();
  withoutModel.restore();
  expect(withoutModel.stored()).toBeGreaterThanOrEqual(AHEAD_RECORDS);

  // The refresh, as a question starts it (active(): the connectors it searches, not the model
  // for its own vectors): every row is cached, nothing goes to the model; the loop must still turn.
  const { embeddings } = t.services;
  const real = embeddings.embed.bind(embeddings);
  let looked = 0;
  embeddings.embed = (owner, texts, ...rest) => {
    looked += texts.length;
    return real(owner, texts, ...rest);
  };
  at += AHEAD_REFRESH_MS + 1;
  const r = await turnsWhile(async () => {
    await t.services.connectors.active("alice");
    await t.services.connectors.embeddedAhead();
  });
  embeddings.embed = real;
  // The refresh ran: every newest row's chunks looked up again, none sent to the model.
  expect(looked).toBeGreaterThanOrEqual(AHEAD_RECORDS);
  expect(embeddings.pending).toBe(0);
  // Against the refresh's own time (a busy machine slows both): in one go, the loop is seen at
  // ~none of its looks and waits the whole; page by page, at most of them, never half the whole.
  const seen = { ms: Math.round(r.ms), share: r.share, longestMs: Math.round(r.longestMs), looked };
  expect({ ...seen, free: r.share >= FREE_SHARE, neverLong: r.longestMs < r.ms / 2 }).toMatchObject({ free: true, neverLong: true });
});
