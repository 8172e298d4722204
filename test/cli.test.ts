import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs, UsageError } from "../src/cli";
import { runCli, tempDir } from "./helpers";
import { skewedClock } from "./support/clock";

// Servers, builds and the model take longer than 5 s on a busy two-core machine.
setDefaultTimeout(60_000);

describe("corpus CLI (D1, D2)", () => {
  test("parses commands and --data-dir", () => {
    expect(parseArgs([])).toEqual({ command: "serve", options: {} });
    expect(parseArgs(["serve", "--data-dir", "/x"])).toEqual({ command: "serve", options: { "data-dir": "/x" } });
    expect(parseArgs(["--data-dir=/y", "check"])).toEqual({ command: "check", options: { "data-dir": "/y" } });
    expect(parseArgs(["version", "--help"]).command).toBe("help");
    expect(() => parseArgs(["--data-dir"])).toThrow(UsageError);
    expect(() => parseArgs(["--port", "1"])).toThrow("unknown option --port");
    expect(() => parseArgs(["serve", "extra"])).toThrow("unexpected argument extra");
  });

  test("corpus version prints 0.1.0", () => {
    const r = runCli(["version"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("0.1.0\n");
  });

  test("corpus --help lists the commands and variables", () => {
    const r = runCli(["--help"]);
    expect(r.code).toBe(0);
    for (const word of ["serve", "check", "version", "--data-dir", "CORPUS_PORT", "CORPUS_MAX_REQUEST_SIZE"])
      expect(r.stdout).toContain(word);
  });

  test("an unknown command or option exits 2 with one line", () => {
    const a = runCli(["frobnicate"]);
    expect(a.code).toBe(2);
    expect(a.stderr.trim().split("\n")).toHaveLength(1);
    expect(a.stderr).toContain("unknown command frobnicate");
    const b = runCli(["--verbose", "1"]);
    expect(b.code).toBe(2);
    expect(b.stderr).toContain("unknown option --verbose");
  });

  test("a bad configuration value stops start-up: exit 2, one line naming variable, value and rule", () => {
    const r = runCli(["serve"], { CORPUS_PORT: "eighty", CORPUS_DATA_DIR: tempDir() });
    expect(r.code).toBe(2);
    const lines = r.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toBe('corpus: CORPUS_PORT="eighty" is not allowed: expected an integer from 0 to 65535');
    expect(r.stdout).toBe("");
  });
});

describe("corpus token (D2)", () => {
  test("create prints a token the server accepts; revoke --jti withdraws it", async () => {
    const dir = tempDir();
    const r = runCli(["token", "create", "--user", "alice", "--scopes", "corpus:search,corpus:read", "--data-dir", dir]);
    expect(r.code).toBe(0);
    const token = r.stdout.trim();
    expect(token.split(".")).toHaveLength(3);
    const claims = JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString());
    expect(claims).toMatchObject({ sub: "alice", scope: "corpus:search corpus:read" });
    expect(claims.exp - claims.iat).toBe(3600);

    const { createServices } = await import("../src/services");
    const { createLogger } = await import("../src/log");
    const { loadConfig } = await import("../src/config");
    const clock = skewedClock();
    const services = await createServices(
      loadConfig({ CORPUS_DATA_DIR: dir }),
      createLogger("ERROR", () => {}),
      clock.now,
    );
    expect((await services.auth.authenticate(`Bearer ${token}`, "corpus:search")).user).toBe("alice");

    const revoke = runCli(["token", "revoke", "--jti", claims.jti, "--data-dir", dir]);
    expect(revoke.code).toBe(0);
    expect(revoke.stdout).toContain(`revoked token ${claims.jti} of alice`);
    clock.advance(2_100); // revoked by another process: the server's cache refreshes revocations within 2 s
    await expect((async () => services.auth.authenticate(`Bearer ${token}`, "corpus:search"))()).rejects.toThrow("revoked");
    await services.close();
  });

  test("a token is minted and revoked even when the connectors file is broken (it is not read)", () => {
    const dir = tempDir();
    const broken = join(tempDir(), "connectors.json");
    writeFileSync(broken, "[{ this is not JSON");
    const env = { CORPUS_CONNECTORS_FILE: broken };
    const r = runCli(["token", "create", "--user", "bob", "--scopes", "connectors:read", "--data-dir", dir], env);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split(".")).toHaveLength(3);
    const revoke = runCli(["token", "revoke", "--user", "bob", "--data-dir", dir], env);
    expect(revoke.code).toBe(0);
  });

  test("--ttl is honoured; bad input exits 2 with one line", () => {
    const dir = tempDir();
    const r = runCli(["token", "create", "--user", "bob", "--scopes", "connectors:read", "--ttl", "120", "--data-dir", dir]);
    const claims = JSON.parse(Buffer.from(r.stdout.trim().split(".")[1]!, "base64url").toString());
    expect(claims.exp - claims.iat).toBe(120);
    for (const [args, message] of [
      [["--user", "bob", "--scopes", "corpus:everything"], "unknown scope corpus:everything"],
      [["--scopes", "corpus:read"], "token create needs --user ID"],
      [["--user", "bob"], "token create needs --scopes"],
      [["--user", "bob", "--scopes", "corpus:read", "--ttl", "ten"], "--ttl must be an integer"],
      [["--user", "bad user!", "--scopes", "corpus:read"], "--user must be"],
      [["--user", "bob", "--scopes", "corpus:read", "--jti", "x"], "unknown option --jti for token create"],
    ] as const) {
      const bad = runCli(["token", "create", ...args, "--data-dir", dir]);
      expect(bad.code).toBe(2);
      expect(bad.stderr.trim().split("\n")).toHaveLength(1);
      expect(bad.stderr).toContain(message);
    }
  });
});
