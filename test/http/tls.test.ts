// HTTPS served by corpus itself (D27: CORPUS_TLS_CERT_FILE / CORPUS_TLS_KEY_FILE), its
// certificate renewed on SIGHUP without dropping what is open, and HSTS only over HTTPS
// (second document part 4). Self-signed certificates made by openssl here; clients trust them
// through `ca` (never by turning verification off), so a connection that gets another
// certificate than the one trusted fails.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { copyFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import tls from "node:tls";
import { ConfigError } from "../../src/config";
import { createLogger, memorySink } from "../../src/log";
import { startServer } from "../../src/server";
import { type Corpus, cli, FIXED_ISSUER, newMasterKey, startCorpus, until } from "../backup/support";
import { runCli, tempDir, testConfig } from "../helpers";
import { selfSigned } from "../support/certificates";

setDefaultTimeout(60_000);

const dir = tempDir("corpus-tls-");
const pem = (name: string) => join(dir, name);

let first: { cert: string; key: string };
let second: { cert: string; key: string };

beforeAll(async () => {
  first = selfSigned(dir, "corpus-first", ["IP:127.0.0.1", "DNS:localhost"]);
  second = selfSigned(dir, "corpus-second", ["IP:127.0.0.1", "DNS:localhost"]);
});

/** Puts `name`'s certificate and key where the server reads them. */
function install(name: string) {
  copyFileSync(pem(`${name}.crt`), pem("server.crt"));
  copyFileSync(pem(`${name}.key`), pem("server.key"));
}

const TLS_ENV = () => ({ CORPUS_TLS_CERT_FILE: pem("server.crt"), CORPUS_TLS_KEY_FILE: pem("server.key") });

/** A TLS connection that trusts only `ca`; rejects when the server shows another certificate. */
function connect(port: number, ca: string): Promise<tls.TLSSocket> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: "127.0.0.1", port, ca: [ca] }, () => resolve(socket));
    socket.once("error", reject);
  });
}

/** HTTP/1.1 by hand on one connection, so that the test knows which connection each request uses. */
class Connection {
  private buffered = "";
  private waiting?: () => void;
  closed = false;
  constructor(readonly socket: tls.TLSSocket) {
    socket.on("data", (d: Buffer) => {
      this.buffered += d.toString("latin1");
      this.waiting?.();
    });
    socket.on("close", () => {
      this.closed = true;
      this.waiting?.();
    });
  }
  get subject(): string {
    return this.socket.getPeerCertificate().subject.CN as string;
  }
  write(text: string) {
    this.socket.write(text);
  }
  /** The next response on this connection: status, headers (lower case), body. Rejects if the connection closes first. */
  async response(): Promise<{ status: number; headers: Record<string, string>; body: string }> {
    for (;;) {
      const end = this.buffered.indexOf("\r\n\r\n");
      if (end >= 0) {
        const [statusLine, ...lines] = this.buffered.slice(0, end).split("\r\n");
        const headers = Object.fromEntries(
          lines.map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]),
        );
        const length = Number(headers["content-length"] ?? 0);
        if (this.buffered.length >= end + 4 + length) {
          const body = this.buffered.slice(end + 4, end + 4 + length);
          this.buffered = this.buffered.slice(end + 4 + length);
          return { status: Number(statusLine!.split(" ")[1]), headers, body };
        }
      }
      if (this.closed) throw new Error("the connection was closed before a response");
      await new Promise<void>((resolve) => (this.waiting = resolve));
    }
  }
}

describe("HTTPS configuration (D27): both files or neither, usable, else a clear start-up error", () => {
  test("one variable without the other: the CLI refuses to start, exit 2, naming both", async () => {
    install("corpus-first");
    const onlyCert = runCli(["serve"], { CORPUS_DATA_DIR: tempDir(), CORPUS_PORT: "0", CORPUS_TLS_CERT_FILE: pem("server.crt") });
    expect(onlyCert.code).toBe(2);
    expect(onlyCert.stderr.trim()).toBe(
      "corpus: CORPUS_TLS_KEY_FILE is not set: expected both CORPUS_TLS_CERT_FILE and CORPUS_TLS_KEY_FILE or neither, and CORPUS_TLS_CERT_FILE is set",
    );
    expect(() => testConfig({ CORPUS_TLS_KEY_FILE: pem("server.key") })).toThrow("CORPUS_TLS_CERT_FILE is not set");
  });

  test("a missing file, a file that is not PEM, a key of another certificate: refused before anything is opened, without the key's bytes", async () => {
    const log = createLogger("INFO", memorySink().sink);
    const start = (env: Record<string, string>) => startServer(testConfig({ CORPUS_PORT: "0", ...env }), log);
    writeFileSync(pem("garbage.pem"), "not a certificate\n");
    const cases: Array<[Record<string, string>, string]> = [
      [
        { CORPUS_TLS_CERT_FILE: pem("missing.crt"), CORPUS_TLS_KEY_FILE: pem("corpus-first.key") },
        `CORPUS_TLS_CERT_FILE="${pem("missing.crt")}" cannot be read (ENOENT)`,
      ],
      [{ CORPUS_TLS_CERT_FILE: pem("garbage.pem"), CORPUS_TLS_KEY_FILE: pem("corpus-first.key") }, "expected a PEM certificate"],
      [
        { CORPUS_TLS_CERT_FILE: pem("corpus-first.crt"), CORPUS_TLS_KEY_FILE: pem("garbage.pem") },
        "expected an unencrypted PEM private key",
      ],
      [
        { CORPUS_TLS_CERT_FILE: pem("corpus-first.crt"), CORPUS_TLS_KEY_FILE: pem("corpus-second.key") },
        "it is not the private key of the certificate in CORPUS_TLS_CERT_FILE",
      ],
    ];
    for (const [env, message] of cases) {
      const error = await start(env).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toContain(message);
      expect((error as Error).message).not.toContain("PRIVATE KEY");
    }
  });
});

describe("a real corpus process serving HTTPS (D27), certificate renewed on SIGHUP", () => {
  let corpus: Corpus;
  let port: number;
  let token: string;

  beforeAll(async () => {
    install("corpus-first");
    const env = { ...FIXED_ISSUER, CORPUS_MASTER_KEY: newMasterKey(), CORPUS_DATA_DIR: join(tempDir(), "data"), ...TLS_ENV() };
    corpus = await startCorpus(env);
    port = Number(new URL(corpus.url).port);
    const made = await cli(["token", "create", "--user", "alice", "--scopes", "corpus:search"], env);
    expect(made.code).toBe(0);
    token = made.stdout.trim();
  });

  afterAll(async () => {
    expect(await corpus?.stop()).toBe(0);
  });

  test("listens on https://, answers over TLS with the configured certificate, HSTS on every response (second document part 4)", async () => {
    expect(corpus.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const ok = await fetch(`${corpus.url}/`, { tls: { ca: first.cert } });
    expect(await ok.json()).toEqual({ status: "ok", service: "corpus", version: "0.1.0" });
    const missing = await fetch(`${corpus.url}/no/such/route`, { tls: { ca: first.cert } });
    expect(missing.status).toBe(404);
    for (const r of [ok, missing]) {
      expect(r.headers.get("strict-transport-security")).toBe("max-age=31536000; includeSubDomains");
      expect(r.headers.get("x-content-type-options")).toBe("nosniff");
    }
    // Plain HTTP on the HTTPS port is no request.
    await expect(fetch(`http://127.0.0.1:${port}/`)).rejects.toThrow("The socket connection was closed unexpectedly");
  });

  test("SIGHUP: new connections get the new certificate; a request in progress on an old connection is answered; idle keep-alive connections are closed cleanly between requests", async () => {
    // An idle keep-alive connection, and a request whose body is half sent when the signal comes.
    const idle = new Connection(await connect(port, first.cert));
    idle.write("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    expect((await idle.response()).status).toBe(200);
    const busy = new Connection(await connect(port, first.cert));
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "1.0" } });
    busy.write(
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nAuthorization: Bearer ${token}\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 20)}`,
    );
    expect(idle.subject).toBe("corpus-first");
    expect(busy.subject).toBe("corpus-first");

    install("corpus-second");
    corpus.proc.kill("SIGHUP");
    await until("the reload's log line", async () => corpus.lines.find((l) => l.message === "TLS certificate reloaded"), 10_000);

    // A new connection trusts only the new certificate, and gets it; one trusting only the old fails.
    const fresh = new Connection(await connect(port, second.cert));
    expect(fresh.subject).toBe("corpus-second");
    await expect(connect(port, first.cert)).rejects.toThrow("self signed certificate");
    const r = await fetch(`${corpus.url}/`, { tls: { ca: second.cert } });
    expect(r.status).toBe(200);
    expect(r.headers.get("strict-transport-security")).toBe("max-age=31536000; includeSubDomains");

    // The request in progress is answered in full on its connection.
    busy.write(body.slice(20));
    const answered = await busy.response();
    expect(answered.status).toBe(200);
    expect(JSON.parse(answered.body).result.protocolVersion).toBe("1.0");

    // The idle connection was closed between requests (as a web server's graceful reload does),
    // not cut mid-answer: it ended without an error and no request was lost on it.
    await until("the idle connection's close", async () => (idle.closed ? true : undefined), 5_000);
    expect(idle.socket.errored).toBeFalsy();
    for (const c of [busy, fresh]) c.socket.destroy();
  });

  test("a client's keep-alive pool goes on across a reload: twenty fetches in flight around a SIGHUP, every one answered", async () => {
    // Both certificates trusted: the pool has connections of either.
    const ca = [first.cert, second.cert];
    const get = () => fetch(`${corpus.url}/`, { tls: { ca } }).then((r) => r.status);
    await Promise.all(Array.from({ length: 5 }, get));
    const before = corpus.lines.filter((l) => l.message === "TLS certificate reloaded").length;
    install("corpus-first");
    const inFlight = Array.from({ length: 20 }, (_, i) => Bun.sleep(i * 2).then(get));
    corpus.proc.kill("SIGHUP");
    expect(await Promise.all(inFlight)).toEqual(Array(20).fill(200));
    await until(
      "the second reload",
      async () => (corpus.lines.filter((l) => l.message === "TLS certificate reloaded").length > before ? true : undefined),
      10_000,
    );
    expect((await new Connection(await connect(port, first.cert))).subject).toBe("corpus-first");
  });

  test("a renewed certificate that cannot be used is not taken: the previous one is still served, the error logged without the key", async () => {
    writeFileSync(pem("server.key"), second.key); // the key of another certificate than server.crt's
    const before = corpus.lines.length;
    corpus.proc.kill("SIGHUP");
    const line = await until(
      "the refusal's log line",
      async () => corpus.lines.slice(before).find((l) => l.message === "TLS certificate not reloaded; the previous one is still served"),
      10_000,
    );
    expect(line.level).toBe("ERROR");
    expect(String(line.reason)).toContain("it is not the private key of the certificate");
    expect(JSON.stringify(corpus.lines)).not.toContain("PRIVATE KEY");
    const still = new Connection(await connect(port, first.cert));
    expect(still.subject).toBe("corpus-first");
    still.socket.destroy();
    expect(corpus.proc.exitCode).toBeNull();
  });
});
