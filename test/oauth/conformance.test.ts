// The MCP conformance suite's authorization-server scenarios (@modelcontextprotocol/conformance
// `authorization`): the RFC 8414 metadata endpoint, and the authorization-code grant, whose
// browser step (sign-in and consent) this test performs through the server's own forms.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createLogger, memorySink } from "../../src/log";
import { type Running, startServer } from "../../src/server";
import { BASE, tempDir, testConfig } from "../helpers";
import { freePort } from "../support/tcp";
import { consent, signIn } from "./support";

setDefaultTimeout(180_000);
const RUNNER = join(import.meta.dir, "../../node_modules/@modelcontextprotocol/conformance/dist/index.js");

let running: Running;

beforeAll(async () => {
  running = await startServer(testConfig({ CORPUS_PORT: String(freePort()) }), createLogger("ERROR", memorySink().sink));
  await running.services.accounts.add("alice", "alice's long password");
});

afterAll(async () => {
  await running?.stop();
});

/** The running server behind the in-process helpers' interface (no redirect followed). */
const remote = {
  handle: (r: Request) =>
    fetch(r.url.replace(BASE, running.url), { method: r.method, headers: r.headers, body: r.body, redirect: "manual" }),
};

describe("MCP conformance: authorization server scenarios", () => {
  test("authorization-server-metadata-endpoint and authorization-code-grant pass", async () => {
    const port = freePort();
    const redirect = `http://127.0.0.1:${port}/callback`;
    const reg = await fetch(`${running.url}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_name: "Conformance", redirect_uris: [redirect], token_endpoint_auth_method: "none" }),
    });
    const clientId = ((await reg.json()) as { client_id: string }).client_id;
    const out = tempDir("corpus-as-conformance-");
    const proc = Bun.spawn(
      [
        process.execPath,
        RUNNER,
        "authorization",
        "--url",
        running.services.config.issuer,
        "--client-id",
        clientId,
        "--resource",
        running.services.config.resourceUrl,
        "-p",
        String(port),
        "-o",
        out,
      ],
      { stdout: "pipe", stderr: "pipe", env: { PATH: process.env.PATH ?? "", HOME: out, NO_COLOR: "1" } },
    );
    // The runner prints the authorization URL and waits for the callback: sign in and consent as a person would.
    let stdout = "";
    const reader = proc.stdout.getReader();
    let url: string | undefined;
    while (!url) {
      const { value, done } = await reader.read();
      if (done) break;
      stdout += new TextDecoder().decode(value);
      url = /(http:\/\/\S+\/oauth\/authorize\?\S+)/.exec(stdout)?.[1];
    }
    expect(url).toBeDefined();
    const session = await signIn(remote, "alice", "alice's long password");
    const back = await consent(remote, session, Object.fromEntries(new URL(url!).searchParams));
    expect(back.searchParams.get("code")).toBeString();
    await fetch(back.href);
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      stdout += new TextDecoder().decode(value);
    }
    await proc.exited;
    const checks = readdirSync(out, { recursive: true })
      .map(String)
      .filter((f) => f.endsWith("checks.json"))
      .flatMap((f) => JSON.parse(readFileSync(join(out, f), "utf8")) as Array<{ id: string; status: string; errorMessage?: string }>);
    const byId = Object.fromEntries(checks.map((c) => [c.id, c]));
    if (checks.some((c) => c.status === "FAILURE")) console.error(stdout, JSON.stringify(checks, null, 2));
    expect(byId["authorization-server-metadata-endpoint"]?.status ?? byId["authorization-server-metadata"]?.status).toBe("SUCCESS");
    expect(byId["authorization-code-grant"]?.status).toBe("SUCCESS");
    expect(checks.filter((c) => c.status === "FAILURE")).toEqual([]);
  });
});
