import { describe, expect, test } from "bun:test";
import { parseArgs, UsageError } from "../src/cli";
import { runCli, tempDir } from "./helpers";

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
    for (const word of ["serve", "check", "version", "--data-dir", "CORPUS_PORT", "CORPUS_MAX_REQUEST_SIZE"]) expect(r.stdout).toContain(word);
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
