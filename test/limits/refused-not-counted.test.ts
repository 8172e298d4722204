// Issue 35 item 5 (D31): refused requests counted against the per-minute limit, though the README
// said they did not: 29 invalid webhook URLs, then a 429 for a valid one. Requests refused as the
// caller's mistake (400, 401, 413, 415) are given back; what is carried out still counts, and
// 429 still comes past the limit. Driven in-process against the real app.

import { describe, expect, test } from "bun:test";
import { bearer, postJson, req, testApp } from "../helpers";
import { askedToo, heldSource } from "../support/held-source";

/** A stopped clock: a minute window must not roll over mid-test (the 61st question would start a new one). */
const stopped = () => {
  const at = Date.now();
  return () => at;
};

const remaining = (r: Response) => [r.headers.get("x-ratelimit-remaining-minute"), r.headers.get("x-ratelimit-remaining-day")];

describe("refused requests do not count against a user's limits (D31)", () => {
  test("40 invalid webhook URLs, then a valid one is registered, not 429; valid ones still reach 429", async () => {
    const { app, services } = await testApp({ CORPUS_LIMIT_WEBHOOKS_PER_MINUTE: "30", CORPUS_WEBHOOK_ALLOW_PRIVATE: "true" }, stopped());
    const tok = (await services.auth.issuer.issue("mallory", ["connectors:read", "connectors:write"])).token;
    const hook = (url: string) => app.handle(postJson("/v1/webhooks", { url, events: ["user.deleted"] }, bearer(tok)));
    for (let i = 0; i < 40; i++) {
      const r = await hook(`ftp://127.0.0.1/${i}`);
      expect(r.status).toBe(400);
      // The headers say it was given back: the whole window still there.
      expect(remaining(r)).toEqual(["30", "1000"]);
    }
    const valid = await hook("http://127.0.0.1:9/hook");
    expect(valid.status).toBe(200);
    expect(remaining(valid)).toEqual(["29", "999"]);
    // Not JSON, a field of another type, an unknown field: 400 too, none counted.
    for (const body of ["{nope", JSON.stringify({ url: 5 }), JSON.stringify({ url: "http://127.0.0.1:9/x", colour: "red" })]) {
      const r = await app.handle(
        req("/v1/webhooks", { method: "POST", body, headers: { "content-type": "application/json", ...bearer(tok) } }),
      );
      expect(r.status).toBe(400);
      expect(remaining(r)).toEqual(["29", "999"]);
    }
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) statuses.push((await hook(`http://127.0.0.1:9/hook-${i}`)).status);
    // 29 more fit in the minute (20 registered, the rest over the per-user cap: 409 is carried out and counts), then 429.
    expect(statuses.slice(0, 29).every((s) => s === 200 || s === 409)).toBe(true);
    expect(statuses[29]).toBe(429);
    await services.close();
  });

  test("/v1/query: bad bodies (empty, not JSON, unknown field) do not count; 60 valid questions do, the 61st is 429", async () => {
    const { app, services } = await testApp({}, stopped());
    const tok = (await services.auth.issuer.issue("alice", ["corpus:search"])).token;
    const ask = (body: string) =>
      app.handle(req("/v1/query", { method: "POST", body, headers: { "content-type": "application/json", ...bearer(tok) } }));
    for (let i = 0; i < 25; i++) {
      for (const body of [JSON.stringify({ query: "" }), "{nope", JSON.stringify({ query: "x", colour: 1 })]) {
        const r = await ask(body);
        expect(r.status).toBe(400);
        expect(remaining(r)).toEqual(["60", "6000"]);
      }
    }
    // Questions carried out count, whatever their answer.
    const statuses: number[] = [];
    for (let i = 0; i < 61; i++) statuses.push((await ask(JSON.stringify({ query: "how much?" }))).status);
    expect(statuses.slice(0, 60).every((s) => s === 200)).toBe(true);
    expect(statuses[60]).toBe(429);
    await services.close();
  });

  test("a search refused only because its token was revoked while it ran still counts, as corpus_search's does", async () => {
    const t = await testApp({}, stopped());
    const tok = (await t.services.auth.issuer.issue("carol", ["corpus:search"])).token;
    const held = heldSource([]);
    askedToo(t, "held", "Held", "user", held.connector);
    const pending = t.app.handle(postJson("/v1/query", { query: "Dabhol plant" }, bearer(tok)));
    await held.asked;
    t.services.auth.store.revokeUser("carol", Date.now() + 1000);
    held.release();
    const r = await pending;
    expect(r.status).toBe(401);
    expect(remaining(r)).toEqual(["59", "5999"]);
    await t.services.close();
  });
});
