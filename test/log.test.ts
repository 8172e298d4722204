// Log lines are bounded whatever a client sends (issue 13, item 11): a 1.5 MB tool name, path
// or method is cut at LOG_VALUE_MAX_CHARS, with a marker giving its length.
import { describe, expect, test } from "bun:test";
import { capLogValue, createLogger, LOG_VALUE_MAX_CHARS, memorySink } from "../src/log";
import { bearer, postJson, req, testApp, tokenFor } from "./helpers";

const HUGE = 1_500_000;
/** Longest a line may be: the fixed fields plus a few cut values. */
const LINE_MAX = 8 * LOG_VALUE_MAX_CHARS;

describe("bounded log lines", () => {
  test("every string of a record is cut, with a marker of its length: message, the fixed fields, fields, nested values, keys", () => {
    const m = memorySink();
    const lines: string[] = [];
    const log = createLogger("DEBUG", (l) => (m.sink(l), lines.push(l)));
    const big = "x".repeat(HUGE);
    log.error(big, {
      tool: big,
      request_id: big,
      client_ip: big,
      method: big,
      nested: { deeper: [big, { again: big }] },
      [big]: 1,
      list: Array(100_000).fill("a"),
    });
    // Eight long strings in it: each is cut.
    expect(lines[0]!.length).toBeLessThan(8 * (LOG_VALUE_MAX_CHARS + 50) + 1000);
    const [r] = m.records();
    const cut = `${"x".repeat(LOG_VALUE_MAX_CHARS)}…[cut: ${HUGE} chars]`;
    expect(r).toMatchObject({
      message: cut,
      tool: cut,
      request_id: cut,
      client_ip: cut,
      method: cut,
      nested: { deeper: [cut, { again: cut }] },
      [cut]: 1,
    });
    expect((r!.list as unknown[]).at(-1)).toBe("…[cut: 100000 items]");
  });

  test("short values, numbers, booleans, null and dates are kept as they are; a surrogate pair is not split", () => {
    const when = new Date(0);
    expect(capLogValue({ a: "ok", n: 1, b: true, z: null, when })).toEqual({ a: "ok", n: 1, b: true, z: null, when: when.toISOString() });
    const emoji = `${"x".repeat(LOG_VALUE_MAX_CHARS - 1)}😀`;
    expect(capLogValue(emoji)).toBe(`${"x".repeat(LOG_VALUE_MAX_CHARS - 1)}…[cut: ${emoji.length} chars]`);
  });

  test("a 1.5 MB tool name sent to /mcp gives an access log line of a few kB", async () => {
    const { app, services, logs } = await testApp();
    const token = await tokenFor(services, "alice", ["corpus:search"]);
    const r = await app.handle(
      postJson("/mcp", { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "t".repeat(HUGE), arguments: {} } }, bearer(token)),
    );
    expect(r.status).toBeLessThan(500);
    const line = await logs.written((l) => l.message === "request");
    expect(JSON.stringify(line).length).toBeLessThan(LINE_MAX);
    expect(String(line.tool)).toEndWith(`…[cut: ${HUGE} chars]`);
    await services.close();
  });

  test("a 1.5 MB path gives an access log line of a few kB", async () => {
    const { app, services, logs } = await testApp();
    const r = await app.handle(req(`/${"p".repeat(HUGE)}`));
    expect(r.status).toBe(404);
    const line = await logs.written((l) => l.message === "request");
    expect(JSON.stringify(line).length).toBeLessThan(LINE_MAX);
    await services.close();
  });
});
