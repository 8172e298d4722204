import { describe, expect, test } from "bun:test";
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  defaultMasterKeyFile,
  existingMasterKey,
  LEGACY_MASTER_KEY_FILE,
  loadMasterKey,
  MasterKeyRefused,
} from "../../src/crypto/master-key";
import { createLogger, memorySink } from "../../src/log";
import { createServices } from "../../src/services";
import { tempDir, testConfig } from "../helpers";

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

// Issue 13 finding 3: the default key file lies beside the data folder; with the folder in a
// shared sticky folder (/tmp), another local user could put a key of their choosing there
// (used without a word: the encryption at rest then opens to them), or a link that made a
// corpus run as root chmod and read any file. Runs as root here and in CI; setpriv plays the
// other user (uid 65534).
describe("a key file another user could have chosen or read is refused (issue 13 finding 3)", () => {
  const OTHER_UID = 65534;
  const asOtherUser = (script: string) => {
    const run = Bun.spawnSync(["setpriv", `--reuid=${OTHER_UID}`, `--regid=${OTHER_UID}`, "--clear-groups", "sh", "-c", script]);
    if (run.exitCode !== 0) throw new Error(run.stderr.toString());
  };
  /** A shared sticky folder like /tmp, where the data folder and its key file are to be. */
  const shared = () => {
    const base = tempDir("corpus-shared-");
    chmodSync(base, 0o755);
    const dir = join(base, "tmp");
    mkdirSync(dir);
    chmodSync(dir, 0o1777);
    return { base, dir };
  };
  const planted = Buffer.alloc(32, 0x41).toString("base64");
  const refusal = (run: () => unknown) => {
    try {
      run();
    } catch (error) {
      expect(error).toBeInstanceOf(MasterKeyRefused);
      return (error as Error).message;
    }
    throw new Error("not refused");
  };

  test("a key planted by another user before the first start: start-up stops, the key is not used", async () => {
    const { dir } = shared();
    const data = join(dir, "corpus-victim");
    asOtherUser(`umask 077; echo ${planted} > ${data}.master.key`);
    expect(refusal(() => loadMasterKey({ dataDir: data }))).toBe(
      `the master key file ${data}.master.key is refused: it is owned by uid ${OTHER_UID}, not by this process (uid 0): a key another user chose would open everything; if it is yours, chown it to uid 0; if not, remove it and restore your own key`,
    );
    expect(refusal(() => existingMasterKey({ dataDir: data }))).toContain(`owned by uid ${OTHER_UID}`);
    await expect(createServices(testConfig({ CORPUS_DATA_DIR: data }), createLogger("CRITICAL", memorySink().sink))).rejects.toThrow(
      `owned by uid ${OTHER_UID}`,
    );
    expect(readFileSync(`${data}.master.key`, "utf8").trim()).toBe(planted);
  });

  test("a link as the key file: refused, never followed; the file it points at keeps its mode", () => {
    const { base, dir } = shared();
    const victim = join(base, "victimfile");
    writeFileSync(victim, "root's own\n");
    chmodSync(victim, 0o644);
    const data = join(dir, "corpus-victim2");
    asOtherUser(`ln -s ${victim} ${data}.master.key`);
    expect(refusal(() => loadMasterKey({ dataDir: data }))).toBe(
      `the master key file ${data}.master.key is refused: it is a link; name the key file itself (CORPUS_MASTER_KEY_FILE), not a link to it`,
    );
    expect(statSync(victim).mode & 0o777).toBe(0o644);
    expect(lstatSync(`${data}.master.key`).isSymbolicLink()).toBe(true);
    // A dangling link is no way in either: nothing is created through it.
    const dangling = join(dir, "corpus-victim4");
    asOtherUser(`ln -s ${join(base, "made-by-corpus")} ${dangling}.master.key`);
    expect(refusal(() => loadMasterKey({ dataDir: dangling }))).toContain("it is a link");
    expect(existsSync(join(base, "made-by-corpus"))).toBe(false);
  });

  test("a key file of ours that others may read is refused, not quietly tightened", () => {
    const dir = dataDir();
    const path = defaultMasterKeyFile(dir);
    writeFileSync(path, `${planted}\n`);
    chmodSync(path, 0o644);
    expect(refusal(() => loadMasterKey({ dataDir: dir }))).toBe(
      `the master key file ${path} is refused: others may read or change it (mode 0644); chmod 600 ${path}, and replace the key if others may have read it`,
    );
    expect(statSync(path).mode & 0o777).toBe(0o644);
    chmodSync(path, 0o600);
    expect(loadMasterKey({ dataDir: dir }).key.toString("base64")).toBe(planted);
  });

  test("a key file in a folder others may write to (not sticky) is refused: it could be swapped", () => {
    const base = tempDir();
    chmodSync(base, 0o777);
    const file = join(base, "corpus.key");
    writeFileSync(file, `${planted}\n`, { mode: 0o600 });
    expect(refusal(() => loadMasterKey({ dataDir: dataDir(), file }))).toContain(`others may write to ${base} (mode 0777)`);
  });

  test("in the shared sticky folder, a key of our own making is used as before", () => {
    const { dir } = shared();
    const data = join(dir, "corpus-ok");
    mkdirSync(data, { mode: 0o700 });
    const { key } = loadMasterKey({ dataDir: data });
    expect(loadMasterKey({ dataDir: data }).key.equals(key)).toBe(true);
    expect(statSync(`${data}.master.key`).mode & 0o777).toBe(0o600);
  });
});
