import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { defaultMasterKeyFile, LEGACY_MASTER_KEY_FILE, loadMasterKey } from "../../src/crypto/master-key";
import { tempDir } from "../helpers";

/** A data folder (created, empty) inside a fresh parent. */
function dataDir(): string {
  const dir = join(tempDir(), "data");
  mkdirSync(dir, { mode: 0o700 });
  return dir;
}

describe("master key (D3, D30)", () => {
  test("generated once on first start beside the data folder, never in it: 32 bytes, mode 0600, stable after", () => {
    const dir = dataDir();
    const { key, warning } = loadMasterKey({ dataDir: dir });
    expect(key.length).toBe(32);
    expect(warning).toBeUndefined();
    const path = defaultMasterKeyFile(dir);
    expect(path).toBe(`${dir}.master.key`);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(loadMasterKey({ dataDir: dir }).key.equals(key)).toBe(true);
    expect(readFileSync(path, "utf8").trim()).toBe(key.toString("base64"));
    // A copy of the data folder takes no key along.
    expect(readdirSync(dir)).toEqual([]);
  });

  test("CORPUS_MASTER_KEY wins and writes no file; CORPUS_MASTER_KEY_FILE names where it lives", () => {
    const dir = dataDir();
    const b64 = Buffer.alloc(32, 7).toString("base64");
    expect(loadMasterKey({ dataDir: dir, fromEnv: b64 }).key.equals(Buffer.alloc(32, 7))).toBe(true);
    expect(existsSync(defaultMasterKeyFile(dir))).toBe(false);
    const file = join(tempDir(), "keys", "corpus.key");
    mkdirSync(join(file, ".."));
    const { key } = loadMasterKey({ dataDir: dir, file });
    expect(readFileSync(file, "utf8").trim()).toBe(key.toString("base64"));
  });

  test("an install with DATA_DIR/master.key keeps using it, with a warning that copies carry it", () => {
    const dir = dataDir();
    const old = Buffer.alloc(32, 9).toString("base64");
    writeFileSync(join(dir, LEGACY_MASTER_KEY_FILE), `${old}\n`, { mode: 0o600 });
    const { key, warning } = loadMasterKey({ dataDir: dir });
    expect(key.toString("base64")).toBe(old);
    expect(warning).toContain("inside the data folder");
    expect(existsSync(defaultMasterKeyFile(dir))).toBe(false);
  });

  test("a damaged key file is refused, not replaced", () => {
    const dir = dataDir();
    writeFileSync(defaultMasterKeyFile(dir), "short\n", { mode: 0o600 });
    expect(() => loadMasterKey({ dataDir: dir })).toThrow("must be 32 bytes in base64");
    expect(readFileSync(defaultMasterKeyFile(dir), "utf8")).toBe("short\n");
  });
});
