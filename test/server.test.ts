import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { statSync } from "node:fs";
import { join } from "node:path";
import { Elysia } from "elysia";
import { defaultMasterKeyFile } from "../src/crypto/master-key";
import { bodyLimit } from "../src/http/body-limit";
import { errorMapper } from "../src/http/errors";
import { createLogger, memorySink } from "../src/log";
import { createFetch, type Running, startServer } from "../src/server";
import { startCorpus } from "./backup/support";
import { tempDir, testConfig } from "./helpers";

// Servers, builds and the model take longer than 5 s on a busy two-core machine.
setDefaultTimeout(60_000);

const logs = memorySink();
const config = testConfig({ CORPUS_PORT: "0", CORPUS_MAX_REQUEST_SIZE: "4096" });
let running: Running;

afterAll(async () => {
  await running?.stop();
});

describe("the listener", () => {
  test("starts on loopback, creates the data dir, key and database", async () => {
    running = await startServer(config, createLogger("INFO", logs.sink));
    expect(running.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(statSync(config.CORPUS_DATA_DIR).mode & 0o777).toBe(0o700);
    expect(statSync(defaultMasterKeyFile(config.CORPUS_DATA_DIR)).mode & 0o777).toBe(0o600);
    const r = await fetch(`${running.url}/`);
    expect(await r.json()).toEqual({ status: "ok", service: "corpus", version: "0.1.0" });
    // Plain HTTP: the security headers, but no HSTS (it is for HTTPS only, D27).
    expect(r.headers.get("x-content-type-options")).toBe("nosniff");
    expect(r.headers.get("strict-transport-security")).toBeNull();
  });

  test("logs carry the socket's client address", async () => {
    const r = await fetch(`${running.url}/no/such/route`);
    await new Promise((res) => setTimeout(res, 20));
    const id = r.headers.get("x-request-id");
    const line = logs.records().find((l) => l.request_id === id)!;
    expect(line.client_ip).toBe("127.0.0.1");
    expect(line.path).toBe("/no/such/route");
  });

  test("first-seen tokens of two users at once, over a real socket: each verified, answered and logged once", async () => {
    const issue = async (user: string) => (await running.services.auth.issuer.issue(user, ["connectors:read"])).token;
    const [alice, bob] = await Promise.all([issue("alice"), issue("bob")]);
    const get = (token: string) => fetch(`${running.url}/v1/connectors`, { headers: { authorization: `Bearer ${token}` } });
    const [a, b, forged] = await Promise.all([get(alice), get(bob), get(`${alice.slice(0, -4)}AAAA`)]);
    expect([a.status, b.status, forged.status]).toEqual([200, 200, 401]);
    expect(await a.json()).toEqual({ connectors: [] });
    expect(forged.headers.get("www-authenticate")).toContain('error="invalid_token"');
    await new Promise((res) => setTimeout(res, 20));
    const lines = logs.records().filter((l) => l.message === "request" && l.path === "/v1/connectors");
    expect(lines.map((l) => l.status).sort()).toEqual([200, 200, 401]);
    expect(new Set(lines.map((l) => l.request_id)).size).toBe(3);
  });

  test("413 in the specification's shape over a real socket, declared length", async () => {
    const declared = await fetch(`${running.url}/`, {
      method: "POST",
      body: "x".repeat(10_000),
      headers: { "content-type": "application/json" },
    });
    expect(declared.status).toBe(413);
    expect(((await declared.json()) as { type: string }).type).toBe("payload_too_large");
  });

  test("far over the limit (past any backstop of the runtime's): still 413 in the spec's shape, with the security headers", async () => {
    const huge = await fetch(`${running.url}/v1/query`, {
      method: "POST",
      body: "x".repeat(config.CORPUS_MAX_REQUEST_SIZE + 200_000),
      headers: { "content-type": "application/json" },
    });
    expect(huge.status).toBe(413);
    expect(huge.headers.get("x-content-type-options")).toBe("nosniff");
    expect(((await huge.json()) as { type: string }).type).toBe("payload_too_large");
  });

  test("a chunked body over the limit is cut off with 413 over a real socket", async () => {
    const app = new Elysia()
      .use(errorMapper(createLogger("ERROR", memorySink().sink)))
      .use(bodyLimit(4096))
      .post("/upload", ({ body }) => ({ got: JSON.stringify(body).length }));
    const server = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: createFetch(app.fetch, config, createLogger("ERROR", memorySink().sink)),
    });
    try {
      let sent = 0;
      const stream = new ReadableStream<Uint8Array>({
        pull(c) {
          if (sent > 2_000_000) return c.close();
          sent += 8192;
          c.enqueue(new Uint8Array(8192).fill(32));
        },
      });
      const chunked = await fetch(`${server.url}upload`, { method: "POST", body: stream, headers: { "content-type": "application/json" } });
      expect(chunked.status).toBe(413);
      expect(((await chunked.json()) as { type: string }).type).toBe("payload_too_large");
      const small = await fetch(`${server.url}upload`, {
        method: "POST",
        body: new Blob(['{"a":1}']).stream(),
        headers: { "content-type": "application/json" },
      });
      expect(await small.json()).toEqual({ got: 7 });
    } finally {
      await server.stop(true);
    }
  });
});

describe("corpus serve (the README's start command)", () => {
  test("starts on embedded defaults in an empty folder and stops on SIGTERM", async () => {
    const cwd = tempDir();
    const server = await startCorpus({ HOME: cwd }, [], { cwd });
    const body = await (await fetch(`${server.url}/`)).json();
    expect(body).toEqual({ status: "ok", service: "corpus", version: "0.1.0" });
    expect(statSync(join(cwd, "corpus-data")).mode & 0o777).toBe(0o700);
    expect(statSync(join(cwd, "corpus-data", "corpus.db")).mode & 0o777).toBe(0o600);
    expect(await server.stop()).toBe(0);
    const lines = server.lines;
    expect(lines[0]).toMatchObject({ level: "INFO", logger: "corpus", message: "listening", url: server.url });
    expect(lines.at(-1)).toMatchObject({ message: "stopping", signal: "SIGTERM" });
  });
});
