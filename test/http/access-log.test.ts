import { describe, expect, test } from "bun:test";
import { beginRequest } from "../../src/http/request-context";
import { createLogger, memorySink } from "../../src/log";
import { req, testApp } from "../helpers";

/** Time for a line that would be written after the response (Elysia's afterResponse) to have been: to see that none was. */
const settle = () => new Promise((r) => setTimeout(r, 20));

describe("structured JSON logs (second document part 8)", () => {
  test("one line per request with the specified fields, no query string", async () => {
    const { app, logs } = await testApp();
    const r = await app.handle(req("/nope?token=secret-value", { headers: { authorization: "Bearer abc.def.ghi" } }));
    const line = await logs.written((l) => l.message === "request");
    for (const key of ["timestamp", "level", "logger", "message", "request_id", "client_ip", "tool"]) expect(line).toHaveProperty(key);
    expect(line.level).toBe("INFO");
    expect(line.request_id).toBe(r.headers.get("x-request-id")!);
    expect(line.path).toBe("/nope");
    expect(line.status).toBe(404);
    expect(new Date(line.timestamp as string).toISOString()).toBe(line.timestamp as string);
    const all = JSON.stringify(logs.records());
    expect(all).not.toContain("secret-value");
    expect(all).not.toContain("abc.def.ghi");
  });

  test("a page or redirect a route makes itself is logged with the status it was sent with, not 200", async () => {
    const { app, logs } = await testApp();
    const hex = "0123456789abcdef0123456789abcdef";
    // The console without a session (401), a citation's page to a caller not signed in (303), an OAuth page refused (400).
    for (const [path, sent] of [
      ["/console/users", 401],
      [`/d/chnk_${hex}`, 303],
      ["/oauth/authorize?client_id=nobody", 400],
    ] as const) {
      const r = await app.handle(req(path));
      expect(r.status, path).toBe(sent);
      const line = await logs.written((l) => l.message === "request" && l.request_id === r.headers.get("x-request-id"));
      expect(line.status, path).toBe(sent);
    }
  });

  test("CORPUS_LOG_LEVEL is honoured", async () => {
    const { app, logs } = await testApp({ CORPUS_LOG_LEVEL: "WARNING" });
    await app.handle(req("/"));
    await settle();
    expect(logs.records()).toEqual([]);
  });

  test("memorySink().written: the first matching line, written already or later; others wait for theirs", async () => {
    const m = memorySink();
    const log = createLogger("INFO", m.sink);
    log.info("before", { n: 1 });
    expect((await m.written((l) => l.message === "before")).n).toBe(1);
    const later = m.written((l) => l.message === "later");
    const other = m.written((l) => l.message === "never");
    let settled = false;
    void later.then(() => (settled = true));
    log.info("unrelated");
    await Promise.resolve();
    expect(settled).toBe(false);
    log.info("later", { n: 2 });
    expect((await later).n).toBe(2);
    expect(await Promise.race([other.then(() => "resolved"), Promise.resolve("waiting")])).toBe("waiting");
  });

  test("levels order DEBUG < INFO < WARNING < ERROR < CRITICAL", () => {
    const m = memorySink();
    const log = createLogger("ERROR", m.sink);
    log.warning("no");
    log.error("yes");
    log.critical("yes too", { request_id: "r1" });
    expect(m.records().map((r) => [r.level, r.message, r.request_id])).toEqual([
      ["ERROR", "yes", null],
      ["CRITICAL", "yes too", "r1"],
    ]);
  });
});

describe("client_ip behind a trusted proxy (second document part 8; issue 18 gap 7)", () => {
  const from = (app: Awaited<ReturnType<typeof testApp>>["app"], socket: string, forwardedFor?: string, path = "/nope") => {
    const r = req(path, forwardedFor ? { headers: { "x-forwarded-for": forwardedFor } } : {});
    beginRequest(r, socket);
    return app.handle(r);
  };

  test("second document part 8 + CORPUS_TRUSTED_PROXIES: the access log names the forwarded client, the address the per-IP limit counts; a client that is no trusted proxy cannot choose its address", async () => {
    const { app, logs } = await testApp({ CORPUS_TRUSTED_PROXIES: "10.0.0.0/8", CORPUS_LOG_LEVEL: "DEBUG" });
    const viaProxy = await from(app, "10.1.2.3", "198.51.100.77, 10.9.9.9");
    const direct = await from(app, "192.0.2.50", "203.0.113.1");
    const noHeader = await from(app, "10.1.2.3");
    const lineOf = (r: Response) => logs.written((l) => l.message === "request" && l.request_id === r.headers.get("x-request-id"));
    expect((await lineOf(viaProxy)).client_ip).toBe("198.51.100.77");
    expect((await lineOf(direct)).client_ip).toBe("192.0.2.50");
    expect((await lineOf(noHeader)).client_ip).toBe("10.1.2.3");
    // The per-IP limit of /mcp charges the same address the log names.
    const { app: limited, logs: limitedLogs } = await testApp({
      CORPUS_TRUSTED_PROXIES: "10.0.0.0/8",
      CORPUS_RATE_LIMIT_REQUESTS_PER_MINUTE: "1",
    });
    const mcp = (socket: string, xff: string) => {
      const r = req("/mcp", { method: "POST", body: "{}", headers: { "content-type": "application/json", "x-forwarded-for": xff } });
      beginRequest(r, socket);
      return limited.handle(r);
    };
    expect((await mcp("10.0.0.1", "198.51.100.8")).status).not.toBe(429);
    const second = await mcp("10.0.0.2", "198.51.100.8");
    expect(second.status).toBe(429);
    const secondLine = await limitedLogs.written((l) => l.message === "request" && l.request_id === second.headers.get("x-request-id"));
    expect(secondLine.client_ip).toBe("198.51.100.8");
  });

  test("without CORPUS_TRUSTED_PROXIES, X-Forwarded-For is never believed", async () => {
    const { app, logs } = await testApp();
    const r = await from(app, "192.0.2.60", "198.51.100.99");
    const line = await logs.written((l) => l.message === "request" && l.request_id === r.headers.get("x-request-id"));
    expect(line.client_ip).toBe("192.0.2.60");
  });
});
