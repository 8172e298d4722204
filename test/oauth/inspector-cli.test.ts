// The MCP Inspector's CLI mode against a running corpus (issue 17): `@modelcontextprotocol/inspector`
// (a pinned devDependency, run under Node offline, with its catalog in a temporary HOME) lists
// the tools and calls corpus_search with a pasted bearer header, in both protocol eras it
// offers (`legacy`: initialize and a session; `modern`: the stateless 2026-07-28 revision),
// with its tool-schema portability check on. Without a token it stops at corpus's 401 and
// asks for an interactive OAuth sign-in.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { createLogger, memorySink } from "../../src/log";
import { type Running, startServer } from "../../src/server";
import { tempDir, testConfig, tokenFor } from "../helpers";
import { offsiteNotes } from "./assistant";

setDefaultTimeout(60_000);
const INSPECTOR = join(import.meta.dir, "../../node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js");

let running: Running;
let token: string;
let home: string;

async function inspector(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const proc = Bun.spawn([Bun.which("node") ?? process.execPath, INSPECTOR, "--cli", `${running.url}/mcp`, ...args], {
    stdout: "pipe",
    stderr: "pipe",
    stdin: "ignore",
    env: { PATH: process.env.PATH ?? "", HOME: home, NO_COLOR: "1" },
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

beforeAll(async () => {
  home = tempDir("corpus-inspector-home-");
  const notes = offsiteNotes();
  running = await startServer(
    testConfig({ CORPUS_PORT: "0", CORPUS_CONNECTOR_ROOTS: notes.roots }),
    createLogger("ERROR", memorySink().sink),
  );
  await notes.add(running.services);
  token = await tokenFor(running.services, "alice", ["corpus:search", "connectors:read"]);
});

afterAll(async () => {
  await running?.stop();
});

describe("MCP Inspector CLI", () => {
  for (const era of ["legacy", "modern"]) {
    test(`tools/list (${era} era, --strict) and tools/call corpus_search with a bearer header`, async () => {
      const auth = ["--header", `Authorization: Bearer ${token}`, "--protocol-era", era, "--format", "json"];
      const list = await inspector(["--method", "tools/list", "--strict", ...auth]);
      if (list.code !== 0) console.error(list.stderr);
      expect(list.code).toBe(0);
      const tools = (JSON.parse(list.stdout) as { result: { tools: Array<{ name: string }> } }).result.tools.map((t) => t.name);
      expect(tools).toContain("corpus_search");
      const call = await inspector([
        "--method",
        "tools/call",
        "--tool-name",
        "corpus_search",
        "--tool-arg",
        "query=where is the team offsite",
        ...auth,
      ]);
      if (call.code !== 0) console.error(call.stderr);
      expect(call.code).toBe(0);
      const result = (JSON.parse(call.stdout) as { result: { isError?: boolean; content: unknown } }).result;
      expect(result.isError).toBeFalsy();
      expect(JSON.stringify(result.content)).toContain("Lisbon");
    });
  }

  test("without a token it meets corpus's 401 and asks for an OAuth sign-in; with a bad one it fails", async () => {
    const none = await inspector(["--method", "tools/list", "--format", "json"]);
    expect(none.code).not.toBe(0);
    expect(none.stderr).toContain("auth_required");
    const bad = await inspector(["--method", "tools/list", "--format", "json", "--header", `Authorization: Bearer ${token}x`]);
    expect(bad.code).not.toBe(0);
    expect(bad.stdout).not.toContain("corpus_search");
  });
});
