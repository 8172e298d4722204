import { describe, expect, test } from "bun:test";
import { createLogger, memorySink } from "../../src/log";
import { req, testApp } from "../helpers";

const settle = () => new Promise((r) => setTimeout(r, 20));

describe("structured JSON logs (second document part 8)", () => {
  test("one line per request with the specified fields, no query string", async () => {
    const { app, logs } = await testApp();
    const r = await app.handle(req("/nope?token=secret-value", { headers: { authorization: "Bearer abc.def.ghi" } }));
    await settle();
    const line = logs.records().find((l) => l.message === "request")!;
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

  test("CORPUS_LOG_LEVEL is honoured", async () => {
    const { app, logs } = await testApp({ CORPUS_LOG_LEVEL: "WARNING" });
    await app.handle(req("/"));
    await settle();
    expect(logs.records()).toEqual([]);
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
