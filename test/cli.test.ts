import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { EMBEDDED_BACKUP_ONLY, parseArgs, UsageError } from "../src/cli";
import { NOT_YET_SHARED } from "../src/store/shared";
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

  test("each command takes its own options, once, with their values (node:util's parser, our messages)", () => {
    const create = ["token", "create", "--scopes", "corpus:read"];
    expect(parseArgs([...create, "--user=-dash"]).options).toEqual({ scopes: "corpus:read", user: "-dash" });
    expect(parseArgs(["backup", "--out", "f", "--force"]).options).toEqual({ out: "f", force: "true" });
    // A word after "--" is no option.
    expect(() => parseArgs(["restore", "--from", "f", "--", "--force"])).toThrow("unexpected argument --force");
    for (const [argv, message] of [
      [[...create, "--user"], "--user needs a value"],
      [[...create, "--user="], "--user needs a value"],
      [["token", "create", "--user", "--scopes", "corpus:read"], "--user needs a value"], // not a user named "--scopes"
      [[...create, "--user", "a", "--user", "b"], "--user is given twice"],
      [["backup", "--out", "f", "--force=yes"], "--force takes no value"],
      [["backup"], "backup needs --out FILE"],
      [["restore"], "restore needs --from FILE"],
      [["user", "add"], "user add needs --user ID"],
      [["user", "list", "--user", "a"], "unknown option --user for user list"],
      [["check", "-x"], "unknown option -x"],
      [["token"], "unknown command token; token takes create, revoke"],
      [["token", "frob"], "unknown command token frob"],
    ] as const) {
      expect(() => parseArgs([...argv])).toThrow(message);
    }
  });

  test("--help, -h and help name the command whose help is asked for", () => {
    expect(parseArgs(["--help"])).toEqual({ command: "help", options: {} });
    expect(parseArgs(["token", "create", "-h"])).toEqual({ command: "help", options: {}, topic: "token create" });
    expect(parseArgs(["token", "--help"]).topic).toBe("token");
    expect(parseArgs(["help", "restore"]).topic).toBe("restore");
    // Asked for help, a bad word gets the general help rather than an error.
    expect(parseArgs(["frobnicate", "--help"])).toEqual({ command: "help", options: {} });
  });

  test("corpus <command> --help prints that command's usage; a usage error points to it, exit 2", () => {
    const help = runCli(["token", "create", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toStartWith("Usage: corpus token create --user ID --scopes s1,s2 [--ttl SECONDS]\n");
    expect(help.stdout).toContain("corpus:search");
    expect(help.stdout).not.toContain("token revoke");
    const group = runCli(["help", "user"]);
    expect(group.code).toBe(0);
    for (const c of ["user add", "user passwd", "user remove", "user list"]) expect(group.stdout).toContain(`Usage: corpus ${c}`);
    const unknown = runCli(["help", "frobnicate"]);
    expect([unknown.code, unknown.stderr]).toEqual([2, "corpus: unknown command frobnicate; see corpus --help\n"]);
    const bad = runCli(["backup", "--out", "x", "--verbose"]);
    expect([bad.code, bad.stdout, bad.stderr]).toEqual([2, "", "corpus: unknown option --verbose for backup; see corpus backup --help\n"]);
    const wrong = runCli(["restore", "--from", "x", "--force"]);
    expect([wrong.code, wrong.stderr]).toEqual([2, "corpus: unknown option --force for restore; see corpus restore --help\n"]);
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

  test("CORPUS_DATABASE_URL set: serve starts on it (every room is shared), and a database it cannot reach stops it with the reason, no password and no SQLite data folder (D33)", () => {
    expect(NOT_YET_SHARED).toEqual([]);
    const dataDir = join(tempDir(), "data");
    const r = runCli(["serve"], { CORPUS_DATA_DIR: dataDir, CORPUS_DATABASE_URL: "postgres://corpus:s3cret-pw@127.0.0.1:1/corpus" });
    expect(r.code).toBe(1);
    const lines = r.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("ECONNREFUSED");
    expect(lines[0]).not.toContain("not yet");
    expect(r.stderr).not.toContain("s3cret-pw");
    expect(existsSync(dataDir)).toBe(false);
  });

  test("CORPUS_DATABASE_URL set: backup and restore, which copy the embedded data folder, are refused naming pg_dump; none writes a data folder (D33)", () => {
    const dataDir = join(tempDir(), "data");
    const env = { CORPUS_DATA_DIR: dataDir, CORPUS_DATABASE_URL: "postgres://corpus:s3cret-pw@127.0.0.1:1/corpus" };
    for (const argv of [
      ["backup", "--out", join(tempDir(), "b.corpus-backup")],
      ["restore", "--from", join(tempDir(), "b.corpus-backup")],
    ]) {
      const r = runCli(argv, env);
      expect(r.code).toBe(2);
      expect(r.stderr.trim()).toBe(`corpus: ${EMBEDDED_BACKUP_ONLY(argv[0]!)}`);
      expect(r.stderr).not.toContain("s3cret-pw");
      expect(existsSync(dataDir)).toBe(false);
    }
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

  test("a token is minted and revoked even when the connectors file or any variable tokens do not use is broken", async () => {
    const dir = tempDir();
    const broken = join(tempDir(), "connectors.json");
    writeFileSync(broken, "[{ this is not JSON");
    // Each of these stops the server (exit 2); none is read to mint a token.
    const env = {
      CORPUS_CONNECTORS_FILE: broken,
      CORPUS_EMBED_THREADS: "many",
      CORPUS_LIMIT_QUERY_PER_DAY: "0",
      CORPUS_WEBHOOK_URL: "https://hooks.example.com/corpus", // without its secret
      CORPUS_CONNECTOR_ALLOW_HOSTS: "10.0.0.0/99",
      CORPUS_LOG_LEVEL: "LOUD",
    };
    expect(runCli(["check", "--data-dir", dir], env).code).toBe(2);
    const r = runCli(["token", "create", "--user", "bob", "--scopes", "connectors:read", "--data-dir", dir], env);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const token = r.stdout.trim();

    // The server, started on the same data folder with a sound configuration, accepts it.
    const { createServices } = await import("../src/services");
    const { createLogger } = await import("../src/log");
    const { loadConfig } = await import("../src/config");
    const services = await createServices(
      loadConfig({ CORPUS_DATA_DIR: dir }),
      createLogger("ERROR", () => {}),
    );
    try {
      expect((await services.auth.authenticate(`Bearer ${token}`, "connectors:read")).user).toBe("bob");
    } finally {
      await services.close();
    }
    const revoke = runCli(["token", "revoke", "--user", "bob", "--data-dir", dir], env);
    expect(revoke.stderr).toBe("");
    expect(revoke.code).toBe(0);
  });

  test("a variable the token names (its audience: host and port) is still checked", () => {
    const r = runCli(["token", "create", "--user", "bob", "--scopes", "corpus:read", "--data-dir", tempDir()], { CORPUS_PORT: "eighty" });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('corpus: CORPUS_PORT="eighty" is not allowed: expected an integer from 0 to 65535\n');
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
