// The operator's connectors are shown to every user with counts only. A live source's refresh of
// its newest records is started by a question (registry.ts `asked`, AHEAD_REFRESH_MS after the
// last run): its `embedding` status and `progress.started_at` then tell every other user that, and
// when, someone asked the shared source a question.
import { expect, test } from "bun:test";
import { AHEAD_PAGE, AHEAD_REFRESH_MS } from "../../src/connectors/embed-ahead";
import { bearer, postJson } from "../helpers";
import { appPerTest, listedConnector } from "../support/app-per-test";
import { operatorSqliteTable, shopOrders } from "../support/sources";
import { vectorsWithoutModel } from "../support/vectors-without-model";

const app = appPerTest();

test("another user's question of the operator's SQL source does not show in a user's listing (status, started_at)", async () => {
  let clock = 1_700_000_000_000;
  const t = await app(operatorSqliteTable("shop", "orders", shopOrders(AHEAD_PAGE * 2)), () => clock);
  // Each background page waits until the test lets it go, once `hold` is set; `reached` says one does.
  let hold: Promise<void> | undefined;
  let release = () => {};
  let reachedHold = () => {};
  const reached = new Promise<void>((resolve) => (reachedHold = resolve));
  const withoutModel = vectorsWithoutModel(t.services.embeddings);
  // Only background work (embedding ahead) is held: the question's own vectors are not.
  const service = t.services.embeddings as unknown as { embed: (...args: unknown[]) => Promise<unknown> };
  const made = service.embed;
  service.embed = async (...args: unknown[]) => {
    if (hold && args[2] === "background") {
      reachedHold();
      await hold;
    }
    return made(...args);
  };
  const alice = await t.services.auth.issuer.issue("alice", ["connectors:read", "corpus:search"]);
  const bob = await t.services.auth.issuer.issue("bob", ["connectors:read", "corpus:search"]);
  const shopOf = (token: string) => listedConnector(t, token, "shop");
  try {
    await shopOf(bob.token);
    await t.services.connectors.embeddedAhead();
    const before = await shopOf(bob.token);
    expect(before.status).toBe("ok");

    // Later, alice asks a question of the shared source.
    clock += AHEAD_REFRESH_MS + 42_000;
    hold = new Promise<void>((resolve) => (release = resolve));
    const asked = await t.app.handle(postJson("/v1/query", { query: "warehouse order" }, bearer(alice.token)));
    expect(asked.status).toBe(200);
    // The refresh her question started is under way: its rows read, a page held.
    await reached;

    // Bob's listing of the operator's connector is what it was: nothing tells him of her question.
    const after = await shopOf(bob.token);
    expect({ status: after.status, started_at: after.progress?.started_at }).toEqual({ status: before.status, started_at: undefined });
  } finally {
    release();
    await t.services.connectors.embeddedAhead();
    service.embed = made;
    withoutModel.restore();
  }
});
