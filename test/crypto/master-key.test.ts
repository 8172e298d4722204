import { describe, expect, test } from "bun:test";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadMasterKey, MASTER_KEY_FILE } from "../../src/crypto/master-key";
import { tempDir } from "../helpers";

describe("master key (D3)", () => {
  test("generated once on first start, 32 bytes, mode 0600, stable after", () => {
    const dir = tempDir();
    const key = loadMasterKey(dir);
    expect(key.length).toBe(32);
    const path = join(dir, MASTER_KEY_FILE);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(loadMasterKey(dir).equals(key)).toBe(true);
    expect(readFileSync(path, "utf8").trim()).toBe(key.toString("base64"));
  });

  test("CORPUS_MASTER_KEY wins and writes no file", () => {
    const dir = tempDir();
    const b64 = Buffer.alloc(32, 7).toString("base64");
    expect(loadMasterKey(dir, b64).equals(Buffer.alloc(32, 7))).toBe(true);
    expect(() => statSync(join(dir, MASTER_KEY_FILE))).toThrow();
  });

  test("a damaged key file is refused, not replaced", () => {
    const dir = tempDir();
    writeFileSync(join(dir, MASTER_KEY_FILE), "short\n", { mode: 0o600 });
    expect(() => loadMasterKey(dir)).toThrow("must be 32 bytes in base64");
    expect(readFileSync(join(dir, MASTER_KEY_FILE), "utf8")).toBe("short\n");
  });
});
