// Idempotency-Key replays on the real routes (D11; issue 13 item 1): the stored answer comes
// back byte for byte, for every shape and route, and is not counted against the limits.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bearer, postJson, testApp } from "../helpers";

const ALL = ["corpus:search", "corpus:read", "connectors:read", "connectors:write"] as never;

describe("Idempotency-Key replays on real routes (D11)", () => {
  let t: Awaited<ReturnType<typeof testApp>>;
  let token: string;
  beforeAll(async () => {
    // A stopped clock: the minute windows must not roll over mid-test.
    const at = Date.now();
    t = await testApp({ CORPUS_LIMIT_QUERY_PER_MINUTE: "3", CORPUS_CONNECTOR_ALLOW_HOSTS: "127.0.0.1" }, () => at);
    token = (await t.services.auth.issuer.issue("replayer", ALL)).token;
  });
  afterAll(() => t.services.close());

  const bodies: Array<[string, unknown]> = [
    ["/v1/query", { query: "fuel invoice" }],
    ["/v1/query", { q: "fuel invoice", top_k: 2 }],
    ["/v1/query", { query: "fuel invoice", conversation_id: null }],
    ["/v1/deep_search", { query: "fuel invoice" }],
    [
      "/v1/connectors",
      {
        id: "replayed",
        kind: "sql",
        config: { url: "postgres://reader:pw@127.0.0.1:1/shop", tables: [{ name: "t", id: "a", title: "b", text: ["c"] }] },
      },
    ],
  ];

  for (const [path, body] of bodies) {
    test(`${path} ${JSON.stringify(body).slice(0, 40)}: same status, body and id again`, async () => {
      const key = `k-${path}-${JSON.stringify(body).length}`;
      const first = await t.app.handle(postJson(path, body, { ...bearer(token), "idempotency-key": key }));
      expect(first.status).toBe(200);
      const text = await first.text();
      for (let i = 0; i < 3; i++) {
        const again = await t.app.handle(postJson(path, body, { ...bearer(token), "idempotency-key": key }));
        expect(again.status).toBe(200);
        expect(again.headers.get("idempotent-replayed")).toBe("true");
        expect(await again.text()).toBe(text);
        expect(again.headers.get("x-content-type-options")).toBe("nosniff");
        if (path !== "/v1/connectors") expect(again.headers.get("x-ratelimit-remaining-minute")).not.toBeNull();
      }
    });
  }

  test("a copy of the database cannot confirm a guessed key or body: both are kept as keyed hashes", async () => {
    const body = { query: "is my husband cheating on me" };
    expect((await t.app.handle(postJson("/v1/deep_search", body, { ...bearer(token), "idempotency-key": "guessable-key-1" }))).status).toBe(
      200,
    );
    const rows = t.db.query<{ idem_key: string; body_hash: string }, []>("SELECT idem_key, body_hash FROM idempotency_records").all();
    const plain = new Bun.CryptoHasher("sha256").update(JSON.stringify(body)).digest("hex");
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) {
      expect(r.idem_key).not.toContain("guessable");
      expect(r.body_hash).not.toBe(plain);
    }
  });

  test("replays are not counted: 3 per minute allows 3 new questions after any number of replays", async () => {
    const at = Date.now();
    const t2 = await testApp({ CORPUS_LIMIT_QUERY_PER_MINUTE: "3", CORPUS_CONNECTOR_ALLOW_HOSTS: "127.0.0.1" }, () => at);
    const tok = (await t2.services.auth.issuer.issue("counter", ALL)).token;
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++)
      statuses.push(
        (await t2.app.handle(postJson("/v1/query", { query: "same" }, { ...bearer(tok), "idempotency-key": "same-key" }))).status,
      );
    for (let i = 0; i < 3; i++) statuses.push((await t2.app.handle(postJson("/v1/query", { query: `new ${i}` }, bearer(tok)))).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 200, 429]);
    await t2.services.close();
  });
});
