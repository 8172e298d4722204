import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { sign, verify } from "../../src/webhooks/signature";
import { checkTarget } from "../../src/webhooks/targets";
import { backoff } from "../../src/webhooks/worker";
import { bearer, postJson, req, testApp } from "../helpers";

setDefaultTimeout(60_000);

describe("webhook signatures (D14)", () => {
  test("t=<unix>,v1=<hex HMAC-SHA256 of \"<t>.<body>\">, verified in constant time, old ones refused", () => {
    const header = sign("whsec_test", '{"a":1}', 1_800_000_000);
    expect(header).toMatch(/^t=1800000000,v1=[0-9a-f]{64}$/);
    expect(verify("whsec_test", '{"a":1}', header, 300, 1_800_000_100_000)).toBe(true);
    expect(verify("whsec_test", '{"a":2}', header, 300, 1_800_000_100_000)).toBe(false);
    expect(verify("other", '{"a":1}', header, 300, 1_800_000_100_000)).toBe(false);
    expect(verify("whsec_test", '{"a":1}', header, 300, 1_800_001_000_000)).toBe(false);
  });

  test("backoff doubles from 2 s with ±20% jitter, capped at an hour", () => {
    expect(backoff(1, () => 0.5)).toBe(2000);
    expect(backoff(2, () => 0.5)).toBe(4000);
    expect(backoff(3, () => 0)).toBe(6400);
    expect(backoff(30, () => 1)).toBe(4_320_000);
  });
});

describe("webhook targets", () => {
  test("http(s) only, no credentials, no private or loopback addresses unless allowed", async () => {
    for (const [url, message] of [
      ["ftp://example.com/x", "must use http or https"],
      ["not a url", "absolute"],
      ["https://user:pw@example.com/", "credentials"],
      ["http://127.0.0.1:9/hook", "private, loopback or link-local"],
      ["http://[::1]/hook", "private, loopback or link-local"],
      ["http://169.254.169.254/latest", "private, loopback or link-local"],
      ["http://10.1.2.3/", "private, loopback or link-local"],
      ["http://localhost:8080/", "private, loopback or link-local"],
    ] as const) {
      await expect(checkTarget(url, false)).rejects.toThrow(message);
    }
    expect((await checkTarget("http://127.0.0.1:9/hook", true)).port).toBe("9");
    expect((await checkTarget("https://93.184.215.14/hook", false)).hostname).toBe("93.184.215.14");
  });
});

describe("POST/GET/DELETE /v1/webhooks", () => {
  let t: Awaited<ReturnType<typeof testApp>>;
  afterAll(async () => t?.services.close());

  test("the secret is shown once; listing never shows it; removal; scopes", async () => {
    t = await testApp({ CORPUS_WEBHOOK_ALLOW_PRIVATE: "true" });
    const tok = (await t.services.auth.issuer.issue("alice", ["connectors:read", "connectors:write"])).token;
    const r = await t.app.handle(postJson("/v1/webhooks", { url: "http://127.0.0.1:9/hook", events: ["user.deleted"] }, bearer(tok)));
    const created = (await r.json()) as Record<string, string>;
    const secret = created.secret!;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{32}$/);
    expect({ ...created }).toMatchObject({ id: expect.stringMatching(/^wh_/), url: "http://127.0.0.1:9/hook", events: ["user.deleted"], secret: expect.stringMatching(/^whsec_/) });
    const list = (await (await t.app.handle(req("/v1/webhooks", { headers: bearer(tok) }))).json()) as { webhooks: unknown[] };
    expect(list.webhooks).toEqual([{ id: created.id, url: "http://127.0.0.1:9/hook", events: ["user.deleted"], created_at: created.created_at }]);
    expect(JSON.stringify(list)).not.toContain(secret);
    const raw = t.db.query<{ secret: Uint8Array }, []>("SELECT secret FROM webhooks").get()!;
    expect(Buffer.from(raw.secret).includes(Buffer.from(secret))).toBe(false);
    expect((await t.app.handle(postJson("/v1/webhooks", { url: "http://127.0.0.1/x", events: ["user.created"] }, bearer(tok)))).status).toBe(400);
    const readOnly = (await t.services.auth.issuer.issue("alice", ["connectors:read"])).token;
    expect((await t.app.handle(postJson("/v1/webhooks", { url: "http://127.0.0.1/x" }, bearer(readOnly)))).status).toBe(403);
    const del = await t.app.handle(req(`/v1/webhooks/${created.id}`, { method: "DELETE", headers: bearer(tok) }));
    expect(await del.json()).toEqual({ id: created.id, deleted: true });
    expect((await t.app.handle(req(`/v1/webhooks/${created.id}`, { method: "DELETE", headers: bearer(tok) }))).status).toBe(404);
  });

  test("without CORPUS_WEBHOOK_ALLOW_PRIVATE a loopback target is 400", async () => {
    const u = await testApp();
    const tok = (await u.services.auth.issuer.issue("alice", ["connectors:write"])).token;
    const r = await u.app.handle(postJson("/v1/webhooks", { url: "http://127.0.0.1:9/hook" }, bearer(tok)));
    expect(r.status).toBe(400);
    expect(((await r.json()) as { message: string }).message).toContain("CORPUS_WEBHOOK_ALLOW_PRIVATE");
    await u.services.close();
  });
});
