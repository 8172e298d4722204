// What `corpus backup` and `corpus restore` refuse (D30), run as the operator would (the CLI in
// child processes) against a real data folder: a folder that is not empty, a damaged or truncated
// file, a wrong or missing master key, a newer schema, an existing --out, a full file system (a
// real tmpfs, mounted for the test). Each refusal says why and leaves nothing behind.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { TRAILER_BYTES } from "../../src/backup/container";
import { BACKUP_MESSAGES } from "../../src/backup/errors";
import { defaultMasterKeyFile, LEGACY_MASTER_KEY_FILE } from "../../src/crypto/master-key";
import { tempDir, testApp } from "../helpers";
import { cli, newMasterKey } from "./support";

setDefaultTimeout(120_000);

const root = tempDir("corpus-backup-refusals-");
const masterKey = newMasterKey();
const otherKey = newMasterKey();
const dataDir = join(root, "data");
const backup = join(root, "corpus.backup");
let dbBytes = 0;

/** A data folder as a server leaves it: database, signing key, two users' wrapped data keys. */
async function makeDataDir(dir: string, env: Record<string, string>): Promise<void> {
  const t = await testApp({ CORPUS_DATA_DIR: dir, ...env });
  t.services.userKeys.keyFor("alice");
  t.services.userKeys.keyFor("bob");
  await t.services.close();
}

const withKey = (dir: string, key = masterKey) => ({ CORPUS_DATA_DIR: dir, CORPUS_MASTER_KEY: key });
const restore = (file: string, dir: string, env: Record<string, string> = withKey(dir)) =>
  cli(["restore", "--from", file], { CORPUS_DATA_DIR: dir, ...env });

/** A copy of the backup with `change` applied to its bytes. */
function variant(name: string, change: (bytes: Buffer) => Buffer): string {
  const path = join(root, name);
  writeFileSync(path, change(Buffer.from(readFileSync(backup))));
  return path;
}
const flip = (at: (size: number) => number) => (b: Buffer) => {
  const i = at(b.length);
  b[i] = b[i]! ^ 0x01;
  return b;
};

beforeAll(async () => {
  await makeDataDir(dataDir, { CORPUS_MASTER_KEY: masterKey });
  const r = await cli(["backup", "--out", backup], withKey(dataDir));
  expect(r.code).toBe(0);
  dbBytes = (JSON.parse(r.stdout) as { files: Array<{ bytes: number }> }).files[0]!.bytes;
});

describe("corpus backup", () => {
  test("--help lists backup and restore", async () => {
    const r = await cli(["--help"], {});
    expect(r.stdout).toContain("backup --out FILE [--force]");
    expect(r.stdout).toContain("restore --from FILE");
  });

  test("an existing --out is refused and left whole; --force replaces it atomically, 0600; nothing else is left in the folder", async () => {
    const folder = join(root, "out");
    mkdirSync(folder);
    const out = join(folder, "b.backup");
    writeFileSync(out, "an older backup\n", { mode: 0o644 });
    const refused = await cli(["backup", "--out", out], withKey(dataDir));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(`corpus: ${BACKUP_MESSAGES.outExists(out)}\n`);
    expect(readFileSync(out, "utf8")).toBe("an older backup\n");
    const forced = await cli(["backup", "--out", out, "--force"], withKey(dataDir));
    expect(forced.code).toBe(0);
    expect(statSync(out).mode & 0o777).toBe(0o600);
    expect(readFileSync(out).subarray(-16).toString()).toBe("corpus-backup-v1");
    expect(readdirSync(folder)).toEqual(["b.backup"]);
  });

  test("--out's folder is the operator's: older backups and other files in it are all kept (only the console's folder is pruned)", async () => {
    const folder = join(root, "kept");
    mkdirSync(folder);
    const older = ["corpus-Mon.backup", "corpus-Tue.backup", "corpus-Wed.backup", "corpus-Thu.backup"];
    for (const name of older) cpSync(backup, join(folder, name));
    writeFileSync(join(folder, "notes.txt"), "not a backup\n");
    const r = await cli(["backup", "--out", join(folder, "corpus-Fri.backup")], { ...withKey(dataDir), CORPUS_BACKUP_KEEP: "1" });
    expect(r.code).toBe(0);
    expect(readdirSync(folder).sort()).toEqual([...older, "corpus-Fri.backup", "notes.txt"].sort());
    for (const name of older) expect(readFileSync(join(folder, name)).equals(readFileSync(backup))).toBe(true);
  });

  test("no database, a folder as --out, a missing folder, no --out: each refused with its reason", async () => {
    const empty = tempDir("corpus-backup-nodata-");
    const none = await cli(["backup", "--out", join(root, "x.backup")], withKey(empty));
    expect([none.code, none.stderr]).toEqual([1, `corpus: ${BACKUP_MESSAGES.noDatabase(empty)}\n`]);
    expect(readdirSync(empty)).toEqual([]);
    const folder = await cli(["backup", "--out", root], withKey(dataDir));
    expect([folder.code, folder.stderr]).toEqual([1, `corpus: ${BACKUP_MESSAGES.outIsFolder(root)}\n`]);
    const missing = await cli(["backup", "--out", join(root, "no", "such", "x.backup")], withKey(dataDir));
    expect([missing.code, missing.stderr]).toEqual([1, `corpus: ${BACKUP_MESSAGES.outFolderMissing(join(root, "no", "such"))}\n`]);
    const usage = await cli(["backup"], withKey(dataDir));
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("backup needs --out FILE");
  });

  test("a legacy DATA_DIR/master.key and the native/ folder stay out of the backup; the key moved out opens the restore", async () => {
    const legacyDir = join(root, "legacy");
    mkdirSync(legacyDir, { mode: 0o700 });
    const legacyKey = newMasterKey();
    writeFileSync(join(legacyDir, LEGACY_MASTER_KEY_FILE), `${legacyKey}\n`, { mode: 0o600 });
    await makeDataDir(legacyDir, {});
    mkdirSync(join(legacyDir, "native", "0123456789abcdef"), { recursive: true });
    writeFileSync(join(legacyDir, "native", "0123456789abcdef", "vec0.so"), "a library copy");
    const out = join(root, "legacy.backup");
    expect((await cli(["backup", "--out", out], { CORPUS_DATA_DIR: legacyDir })).code).toBe(0);
    const bytes = readFileSync(out);
    expect(bytes.includes(Buffer.from(legacyKey, "base64"))).toBe(false);
    expect(bytes.includes(Buffer.from(legacyKey))).toBe(false);
    expect(bytes.includes(Buffer.from("a library copy"))).toBe(false);
    // The README's way: the key moved beside the folder (or anywhere, named by CORPUS_MASTER_KEY_FILE).
    const moved = join(root, "keys", "corpus.key");
    mkdirSync(join(root, "keys"), { mode: 0o700 });
    cpSync(join(legacyDir, LEGACY_MASTER_KEY_FILE), moved);
    const target = join(root, "legacy-restored");
    const r = await restore(out, target, { CORPUS_MASTER_KEY_FILE: moved });
    expect(r.stderr).toBe("");
    expect(readdirSync(target).sort()).toEqual(["corpus.db", "signing-key.json"]);
  });
});

describe("corpus verify", () => {
  test("passes a whole backup with a report, without a key; refuses a flipped byte or a cut file as restore does", async () => {
    const ok = await cli(["verify", "--from", backup], {});
    expect([ok.code, ok.stderr]).toEqual([0, ""]);
    const report = JSON.parse(ok.stdout) as { verified: boolean; bytes: number; files: Array<{ name: string; sha256: string }> };
    expect(report.verified).toBe(true);
    expect(report.bytes).toBe(statSync(backup).size);
    expect(report.files.map((f) => f.name)).toEqual(["corpus.db", "signing-key.json"]);
    const flipped = variant(
      "verify-flipped",
      flip(() => Math.floor(dbBytes / 2)),
    );
    const bad = await cli(["verify", "--from", flipped], {});
    expect([bad.code, bad.stderr]).toEqual([1, `corpus: ${BACKUP_MESSAGES.damaged(flipped, "corpus.db does not match its sha256")}\n`]);
    const cut = variant("verify-cut", (b) => b.subarray(0, b.length - 1));
    expect((await cli(["verify", "--from", cut], {})).stderr).toBe(`corpus: ${BACKUP_MESSAGES.notABackup(cut)}\n`);
    expect((await cli(["verify"], {})).stderr).toContain("verify needs --from FILE");
  });
});

describe("corpus restore refuses", () => {
  test("a folder that is not empty, a file, a link: each left as it was", async () => {
    const full = join(root, "full-folder");
    mkdirSync(full);
    writeFileSync(join(full, "notes.txt"), "mine\n");
    const r = await restore(backup, full);
    expect([r.code, r.stderr]).toEqual([1, `corpus: ${BACKUP_MESSAGES.targetNotEmpty(full)}\n`]);
    expect(readdirSync(full)).toEqual(["notes.txt"]);
    const file = join(root, "a-file");
    writeFileSync(file, "x");
    expect((await restore(backup, file)).stderr).toBe(`corpus: ${BACKUP_MESSAGES.targetNotFolder(file)}\n`);
    const emptyDir = join(root, "empty-elsewhere");
    mkdirSync(emptyDir);
    const link = join(root, "a-link");
    symlinkSync(emptyDir, link);
    expect((await restore(backup, link)).stderr).toBe(`corpus: ${BACKUP_MESSAGES.targetNotFolder(link)}\n`);
    expect(readdirSync(emptyDir)).toEqual([]);
  });

  test("a byte flipped anywhere: in the database, the signing key, the manifest, the trailer", async () => {
    const cases: Array<[string, (size: number) => number, string]> = [
      ["database", () => Math.floor(dbBytes / 2), "corpus.db does not match its sha256"],
      ["database header", () => 20, "corpus.db does not match its sha256"],
      ["signing key", () => dbBytes + 40, "signing-key.json does not match its sha256"],
      ["manifest", (n) => n - TRAILER_BYTES - 30, "its manifest does not match the manifest's sha256"],
      ["manifest checksum", (n) => n - 30, "its manifest does not match the manifest's sha256"],
      ["manifest length", (n) => n - TRAILER_BYTES + 6, ""],
    ];
    for (const [name, at, why] of cases) {
      const file = variant(`flipped-${name.replace(/ /g, "-")}`, flip(at));
      const target = join(root, `restore-flipped-${name.replace(/ /g, "-")}`);
      const r = await restore(file, target);
      expect(r.code).toBe(1);
      expect(r.stderr).toStartWith(`corpus: ${file} is damaged (${why}`);
      expect(existsSync(target)).toBe(false);
    }
    const magic = variant(
      "flipped-magic",
      flip((n) => n - 1),
    );
    expect((await restore(magic, join(root, "restore-magic"))).stderr).toBe(`corpus: ${BACKUP_MESSAGES.notABackup(magic)}\n`);
  });

  test("a truncated file, and a file that is no backup at all", async () => {
    for (const [name, keep] of [
      ["half", (n: number) => Math.floor(n / 2)],
      ["last-byte", (n: number) => n - 1],
      ["members-only", () => dbBytes],
      ["empty", () => 0],
    ] as const) {
      const file = variant(`truncated-${name}`, (b) => b.subarray(0, keep(b.length)));
      const target = join(root, `restore-truncated-${name}`);
      const r = await restore(file, target);
      expect([r.code, r.stderr]).toEqual([1, `corpus: ${BACKUP_MESSAGES.notABackup(file)}\n`]);
      expect(existsSync(target)).toBe(false);
    }
    const db = join(dataDir, "corpus.db");
    expect((await restore(db, join(root, "restore-a-db"))).stderr).toBe(`corpus: ${BACKUP_MESSAGES.notABackup(db)}\n`);
    for (const missing of [join(root, "no-such.backup"), root]) {
      expect((await restore(missing, join(root, "restore-missing"))).stderr).toBe(`corpus: ${BACKUP_MESSAGES.noBackup(missing)}\n`);
    }
    expect(existsSync(join(root, "restore-missing"))).toBe(false);
  });

  test("a wrong master key, before anything is written; an empty folder stays empty and as it was", async () => {
    const absent = join(root, "restore-wrong-key");
    const r = await restore(backup, absent, withKey(absent, otherKey));
    expect([r.code, r.stderr]).toEqual([1, `corpus: ${BACKUP_MESSAGES.wrongKey(backup)}\n`]);
    expect(existsSync(absent)).toBe(false);
    const empty = join(root, "restore-wrong-key-file");
    mkdirSync(empty, { mode: 0o755 });
    const keyFile = join(root, "other.key");
    writeFileSync(keyFile, `${otherKey}\n`, { mode: 0o600 });
    const viaFile = await restore(backup, empty, { CORPUS_MASTER_KEY_FILE: keyFile });
    expect(viaFile.stderr).toBe(`corpus: ${BACKUP_MESSAGES.wrongKey(backup)}\n`);
    expect(readdirSync(empty)).toEqual([]);
    expect(statSync(empty).mode & 0o777).toBe(0o755);
  });

  test("a wrong master key on a backup without a signing key: the users' wrapped keys refuse it, and the folder is removed again", async () => {
    const dir = join(root, "no-signing-key");
    cpSync(dataDir, dir, { recursive: true });
    rmSync(join(dir, "signing-key.json"));
    const out = join(root, "no-signing-key.backup");
    expect((await cli(["backup", "--out", out], withKey(dir))).code).toBe(0);
    const target = join(root, "restore-no-signing-key");
    const r = await restore(out, target, withKey(target, otherKey));
    expect([r.code, r.stderr]).toEqual([1, `corpus: ${BACKUP_MESSAGES.wrongKey(out)}\n`]);
    expect(existsSync(target)).toBe(false);
    const right = await restore(out, target);
    expect(JSON.parse(right.stdout).master_key).toBe("opens 2 user data keys");
  });

  test("no master key where the server would read it: said, and nothing generated", async () => {
    const target = join(root, "restore-no-key");
    const r = await restore(backup, target, {});
    expect([r.code, r.stderr]).toEqual([1, `corpus: ${BACKUP_MESSAGES.noKey(target)}\n`]);
    expect(existsSync(target)).toBe(false);
    expect(existsSync(defaultMasterKeyFile(target))).toBe(false);
    // The key put where the server reads it by default (beside the folder): restored.
    writeFileSync(defaultMasterKeyFile(target), `${masterKey}\n`, { mode: 0o600 });
    const ok = await restore(backup, target, {});
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout).master_key).toBe("opens the signing key and 2 user data keys");
  });

  test("a backup from a newer schema", async () => {
    const dir = join(root, "newer");
    cpSync(dataDir, dir, { recursive: true });
    const db = new Database(join(dir, "corpus.db"));
    db.query("INSERT INTO schema_migrations (id, applied_at) VALUES ('zz-999-future', ?)").run(new Date().toISOString());
    db.close();
    const out = join(root, "newer.backup");
    expect((await cli(["backup", "--out", out], withKey(dir))).code).toBe(0);
    const target = join(root, "restore-newer");
    const r = await restore(out, target);
    expect([r.code, r.stderr]).toEqual([1, `corpus: ${BACKUP_MESSAGES.newerSchema(out, ["zz-999-future"])}\n`]);
    expect(existsSync(target)).toBe(false);
  });
});

// A real small file system (CI runs as root): tmpfs mounted for the test, nothing simulated.
const canMount = process.getuid?.() === 0 && spawnSync("mount", ["--version"]).status === 0;

describe.skipIf(!canMount)("a full file system", () => {
  const mount = join(root, "tiny");
  const big = join(root, "big");
  beforeAll(async () => {
    // A database larger than the file system: 3 MiB of random rows beside the real tables.
    cpSync(dataDir, big, { recursive: true });
    const db = new Database(join(big, "corpus.db"));
    db.exec("CREATE TABLE filler (b BLOB)");
    for (let i = 0; i < 48; i++) db.query("INSERT INTO filler VALUES (?)").run(randomBytes(64 * 1024));
    db.close();
    mkdirSync(mount);
    expect(spawnSync("mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", mount]).status).toBe(0);
  });
  afterAll(() => {
    spawnSync("umount", [mount]);
  });

  test("backup: a clear message and no partial file", async () => {
    const out = join(mount, "b.backup");
    const r = await cli(["backup", "--out", out], withKey(big));
    expect([r.code, r.stderr]).toEqual([1, `corpus: ${BACKUP_MESSAGES.noSpace(mount)}\n`]);
    expect(readdirSync(mount)).toEqual([]);
  });

  test("restore: a clear message, and the folder it made removed again", async () => {
    const out = join(root, "big.backup");
    expect((await cli(["backup", "--out", out], withKey(big))).code).toBe(0);
    const target = join(mount, "data");
    const r = await restore(out, target);
    expect([r.code, r.stderr]).toEqual([1, `corpus: ${BACKUP_MESSAGES.noSpace(target)}\n`]);
    expect(readdirSync(mount)).toEqual([]);
  });
});
