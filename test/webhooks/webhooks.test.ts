import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { sign, verify } from "../../src/webhooks/signature";
import { checkTarget } from "../../src/webhooks/targets";
import { backoff, WebhookWorker } from "../../src/webhooks/worker";
import { bearer, postJson, req, testApp } from "../helpers";

setDefaultTimeout(60_000);

describe("webhook signatures (D14)", () => {
  test('t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<body>">, verified in constant time, old ones refused', () => {
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
      ["http://127.0.0.1:9/hook", "private, loopback, link-local"],
      ["http://[::1]/hook", "private, loopback, link-local"],
      ["http://169.254.169.254/latest", "private, loopback, link-local"],
      ["http://10.1.2.3/", "private, loopback, link-local"],
      ["http://localhost:8080/", "private, loopback, link-local"],
    ] as const) {
      await expect(checkTarget(url, false)).rejects.toThrow(message);
    }
    expect((await checkTarget("http://127.0.0.1:9/hook", true)).url.port).toBe("9");
    expect((await checkTarget("https://93.184.215.14/hook", false)).pinned).toEqual({ address: "93.184.215.14", family: 4 });
  });

  test("every spelling of a loopback or internal address is refused (issue 13 item 5)", async () => {
    for (const url of [
      "http://[::ffff:127.0.0.1]:8080/hook",
      "http://[::ffff:7f00:1]/hook",
      "http://[0:0:0:0:0:ffff:7f00:1]/hook",
      "http://0.0.0.0:8080/",
      "http://0/",
      "http://127.1/",
      "http://2130706433/",
      "http://0x7f000001/",
      "http://0x7f.1/",
      "http://0177.0.0.1/",
      "http://[::]/",
      "http://[::127.0.0.1]/",
      "http://[fd00::1]/",
      "http://[fe80::1]/",
      "http://[64:ff9b::7f00:1]/",
      "http://[2002:7f00:1::1]/",
      "http://100.64.0.1/",
      "http://192.0.2.1/",
      "http://255.255.255.255/",
      "http://224.0.0.1/",
      "http://0xA9.0xFE.0xA9.0xFE/latest/meta-data/",
    ]) {
      const refused = await checkTarget(url, false).then(
        () => "allowed",
        (e: Error) => e.message,
      );
      expect([url, refused]).toEqual([url, expect.stringContaining("CORPUS_WEBHOOK_ALLOW_PRIVATE=true")]);
    }
  });

  test("a name is resolved once and every address it answers is checked", async () => {
    const calls: string[] = [];
    const resolve = async (host: string) => (calls.push(host), ["93.184.215.14", "127.0.0.1"]);
    await expect(checkTarget("https://hooks.example/x", false, resolve)).rejects.toThrow("hooks.example is not a public address");
    expect(calls).toEqual(["hooks.example"]);
  });
});

describe("webhook deliveries go to the address that was checked (DNS rebinding)", () => {
  /** Two receivers on one port, 127.0.0.1 and 127.0.0.2: the checked one and the rebinding target. */
  async function twoReceivers() {
    for (let tries = 0; ; tries++) {
      const hits = { checked: [] as string[], rebound: [] as string[] };
      const checked = Bun.serve({
        hostname: "127.0.0.1",
        port: 0,
        fetch: async (r) => (hits.checked.push(`${r.headers.get("host")} ${await r.text()}`), new Response("ok")),
      });
      try {
        const rebound = Bun.serve({
          hostname: "127.0.0.2",
          port: checked.port,
          fetch: (r) => (hits.rebound.push(r.url), new Response("ok")),
        });
        return { hits, port: checked.port, stop: () => (checked.stop(true), rebound.stop(true)) };
      } catch (error) {
        checked.stop(true);
        if (tries > 5) throw error;
      }
    }
  }

  test("the resolver is asked once per delivery; a second, different answer is never used", async () => {
    const t = await testApp();
    const r = await twoReceivers();
    try {
      let lookups = 0;
      // First answer: the address that is checked; every later one: a rebinding to another.
      const resolve = async () => (lookups++ === 0 ? ["127.0.0.1"] : ["127.0.0.2"]);
      const worker = new WebhookWorker(t.services.webhooks, true, t.services.log.child("test"), Date.now, resolve);
      t.services.webhooks.enqueue("user.deleted", { user_id: "alice" }, [
        { url: `http://hooks.rebind.test:${r.port}/in`, secret: "whsec_test" },
      ]);
      await worker.tick();
      expect(lookups).toBe(1);
      expect(r.hits.rebound).toEqual([]);
      expect(r.hits.checked).toHaveLength(1);
      // The name still goes out as the Host header.
      expect(r.hits.checked[0]).toStartWith(`hooks.rebind.test:${r.port} {"id":"evt_`);
      expect(t.services.webhooks.pending()).toBe(0);
    } finally {
      r.stop();
      await t.services.close();
    }
  });

  test("a redirect is not followed: the delivery failed and the redirect's target got nothing", async () => {
    const t = await testApp();
    const hits: string[] = [];
    const inside = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (q) => (hits.push(q.url), new Response("secret")) });
    const redirector = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: () => new Response(null, { status: 307, headers: { location: `http://127.0.0.1:${inside.port}/admin` } }),
    });
    try {
      const worker = new WebhookWorker(t.services.webhooks, true, t.services.log.child("test"));
      t.services.webhooks.enqueue("user.deleted", { user_id: "alice" }, [
        { url: `http://127.0.0.1:${redirector.port}/hook`, secret: "whsec_test" },
      ]);
      await worker.tick();
      expect(hits).toEqual([]);
      expect(t.services.webhooks.pending()).toBe(1);
      expect(t.db.query<{ last_error: string }, []>("SELECT last_error FROM webhook_outbox").get()!.last_error).toBe(
        "receiver answered 307",
      );
    } finally {
      inside.stop(true);
      redirector.stop(true);
      await t.services.close();
    }
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
    expect({ ...created }).toMatchObject({
      id: expect.stringMatching(/^wh_/),
      url: "http://127.0.0.1:9/hook",
      events: ["user.deleted"],
      secret: expect.stringMatching(/^whsec_/),
    });
    const list = (await (await t.app.handle(req("/v1/webhooks", { headers: bearer(tok) }))).json()) as { webhooks: unknown[] };
    expect(list.webhooks).toEqual([
      { id: created.id, url: "http://127.0.0.1:9/hook", events: ["user.deleted"], created_at: created.created_at },
    ]);
    expect(JSON.stringify(list)).not.toContain(secret);
    const raw = t.db.query<{ secret: Uint8Array }, []>("SELECT secret FROM webhooks").get()!;
    expect(Buffer.from(raw.secret).includes(Buffer.from(secret))).toBe(false);
    expect(
      (await t.app.handle(postJson("/v1/webhooks", { url: "http://127.0.0.1/x", events: ["user.created"] }, bearer(tok)))).status,
    ).toBe(400);
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

describe("webhooks per user are capped (CORPUS_MAX_WEBHOOKS_PER_USER; issue 13, item 11)", () => {
  test("one more than the cap is 409 conflict naming the limit, even sent all at once; other users are not affected; removing one makes room", async () => {
    const u = await testApp({ CORPUS_WEBHOOK_ALLOW_PRIVATE: "true", CORPUS_MAX_WEBHOOKS_PER_USER: "2" });
    const tok = async (user: string) => (await u.services.auth.issuer.issue(user, ["connectors:read", "connectors:write"])).token;
    const alice = await tok("alice");
    const register = (t: string, i: number) => u.app.handle(postJson("/v1/webhooks", { url: `http://127.0.0.1:9/hook${i}` }, bearer(t)));
    const burst = await Promise.all([0, 1, 2, 3, 4].map((i) => register(alice, i)));
    expect(burst.map((r) => r.status).sort()).toEqual([200, 200, 409, 409, 409]);
    const refused = (await burst.find((r) => r.status === 409)!.json()) as { type: string; message: string };
    expect(refused.type).toBe("conflict");
    expect(refused.message).toContain("CORPUS_MAX_WEBHOOKS_PER_USER=2");
    expect(await u.services.webhooks.count("alice")).toBe(2);
    expect((await register(await tok("bob"), 9)).status).toBe(200);
    const [first] = await u.services.webhooks.list("alice");
    expect((await u.app.handle(req(`/v1/webhooks/${first!.id}`, { method: "DELETE", headers: bearer(alice) }))).status).toBe(200);
    expect((await register(alice, 5)).status).toBe(200);
    await u.services.close();
  });
});
