// A live source's newest records embedded ahead show as work a person can follow (issue 14): the
// connector's status is `embedding`, with records done of total, rate and time left, until they
// are; then `ok`. Its answers do not wait for it. A try that stops part-way stays `embedding`
// where it stopped until the next.
import { expect, test } from "bun:test";
import { AHEAD_PAGE } from "../../src/connectors/embed-ahead";
import { bearer, req } from "../helpers";
import { type App, appPerTest, listedConnector } from "../support/app-per-test";
import { operatorSqliteTable, shopOrders } from "../support/sources";
import { vectorsWithoutModel } from "../support/vectors-without-model";

const app = appPerTest();
const ROWS = AHEAD_PAGE * 2 + 22;

const shopAsListed = (t: App, token: string) => listedConnector(t, token, "shop");

test("GET /v1/connectors: `embedding` with the records embedded ahead so far, then `ok` once all are", async () => {
  const t = await app(operatorSqliteTable("shop", "orders", shopOrders(ROWS)));
  // The second page is held until the test lets it go.
  let pages = 0;
  let release = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  let reachedSecond = () => {};
  const second = new Promise<void>((resolve) => (reachedSecond = resolve));
  const withoutModel = vectorsWithoutModel(t.services.embeddings, async () => {
    if (++pages !== 2) return;
    reachedSecond();
    await held;
  });
  const alice = await t.services.auth.issuer.issue("alice", ["connectors:read", "corpus:search"]);
  const shop = () => shopAsListed(t, alice.token);
  try {
    await shop();
    await second;
    const during = await shop();
    expect(during.status).toBe("embedding");
    expect(during.progress).toMatchObject({ phase: "embedding", unit: "records", done: AHEAD_PAGE, total: ROWS });
    // The operator's metrics count it by kind, with its progress, and nothing that names it (D35).
    const states = await t.services.connectors.states();
    expect(states).toEqual([
      { kind: "sql", state: "embedding", progress: { phase: "embedding", unit: "records", done: AHEAD_PAGE, total: ROWS } },
    ]);
    // Questions are answered meanwhile, from the source itself.
    const asked = await t.app.handle(
      req("/v1/query", {
        method: "POST",
        headers: { ...bearer(alice.token), "content-type": "application/json" },
        body: JSON.stringify({ query: "warehouse order" }),
      }),
    );
    expect(asked.status).toBe(200);
    expect(((await asked.json()) as { results: unknown[] }).results.length).toBeGreaterThan(0);
  } finally {
    release();
  }
  await t.services.connectors.embeddedAhead();
  withoutModel.restore();
  expect(withoutModel.stored()).toBeGreaterThanOrEqual(ROWS);
  const after = await shop();
  expect(after.status).toBe("ok");
  expect(after.progress).toBeUndefined();
  expect(await t.services.connectors.states()).toEqual([{ kind: "sql", state: "ok" }]);
});

test("a try that fails part-way (a page refused: a full disk) stays `embedding` where it stopped, not `ok` as if all were embedded", async () => {
  const t = await app(operatorSqliteTable("shop", "orders", shopOrders(AHEAD_PAGE * 3)));
  let pages = 0;
  const withoutModel = vectorsWithoutModel(t.services.embeddings, async () => {
    if (++pages === 2) throw new Error("no space left on device");
  });
  const alice = await t.services.auth.issuer.issue("alice", ["connectors:read"]);
  try {
    await shopAsListed(t, alice.token);
    await t.services.connectors.embeddedAhead();
  } finally {
    withoutModel.restore();
  }
  // One page of three was embedded.
  expect(withoutModel.stored()).toBe(AHEAD_PAGE);
  const after = await shopAsListed(t, alice.token);
  // Where it stopped, until the next try (a question at least AHEAD_RETRY_MS later); no reason on the operator's.
  expect(after.status).toBe("embedding");
  expect(after.progress).toMatchObject({ phase: "embedding", unit: "records", done: AHEAD_PAGE, total: AHEAD_PAGE * 3 });
  expect(after.reason).toBeUndefined();
});
