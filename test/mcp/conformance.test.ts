// The official MCP conformance suite's server scenarios against a running corpus (issue 13):
// every scenario passes but those in conformance-baseline.yaml, each there for a stated
// reason; a baseline entry that starts passing fails the run too (it must be removed).
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { createLogger, memorySink } from "../../src/log";
import { startServer, type Running } from "../../src/server";
import { tempDir, testConfig } from "../helpers";

setDefaultTimeout(300_000);

const RUNNER = join(import.meta.dir, "../../node_modules/@modelcontextprotocol/conformance/dist/index.js");
const BASELINE = join(import.meta.dir, "conformance-baseline.yaml");

describe("MCP conformance suite (@modelcontextprotocol/conformance)", () => {
  let running: Running;
  beforeAll(async () => {
    // The suite connects without a token: development mode, which must still refuse a
    // rebinding Host (scenario dns-rebinding-protection).
    const config = testConfig({ CORPUS_PORT: "0", CORPUS_AUTH_DISABLED: "true", CORPUS_RATE_LIMIT_REQUESTS_PER_MINUTE: "100000" });
    running = await startServer(config, createLogger("ERROR", memorySink().sink));
  });
  afterAll(async () => {
    await running?.stop();
  });

  for (const revision of ["2025-11-25"]) {
    test(`server scenarios of revision ${revision}: only the baseline's expected failures`, async () => {
      const out = tempDir("corpus-conformance-");
      const proc = Bun.spawn([process.execPath, RUNNER, "server", "--url", `${running.url}/mcp`, "--spec-version", revision, "--expected-failures", BASELINE, "-o", out], {
        stdout: "pipe",
        stderr: "pipe",
        env: { PATH: process.env.PATH ?? "", HOME: out, NO_COLOR: "1" },
      });
      const [code, stdout, stderr] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
      const summary = stdout.slice(stdout.indexOf("=== SUMMARY ==="));
      if (code !== 0 || process.env.CORPUS_CONFORMANCE_VERBOSE) console.error(summary, stderr.slice(-2000));
      expect(summary).toContain("dns-rebinding-protection");
      expect(code).toBe(0);
    });
  }
});
