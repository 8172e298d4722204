// Native copies (issue 13, item 4): whatever another user (or a crash) left where the copy
// goes is replaced or refused, never loaded; a data folder others could swap is refused.
// Runs as root here and in CI: chown plays the other local user.
import { Database } from "bun:sqlite";
import { beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import {
  chmodSync,
  chownSync,
  copyFileSync,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { type NativeLibrary, nativeLibraries } from "../../src/native/assets";
import { materializeCopy, NATIVE_FOLDER } from "../../src/native/materialize";
import { checkedDataDir, DataFolderRefused } from "../../src/store/data-dir";
import { tempDir } from "../helpers";
import { plantedLibrary } from "./planted";

const OTHER_UID = 65534;
const vec0 = nativeLibraries.sqliteVec;
const vec0Bytes = readFileSync(vec0.source);
const folderName = createHash("sha256").update(vec0Bytes).digest("hex").slice(0, 16);

/** A data folder as ensureDataDir leaves it, and where the copy of vec0.so goes in it. */
function dataDir() {
  const dir = tempDir("corpus-native-test-");
  chmodSync(dir, 0o700);
  const native = join(dir, NATIVE_FOLDER);
  const own = join(native, folderName);
  return { dir, native, own, target: join(own, "vec0.so") };
}

let planted: string;
let mark: string;
beforeAll(() => {
  ({ path: planted, mark } = plantedLibrary());
});

/** Materialises vec0.so into `dir`, loads it the way the store does, and proves what ran. */
function loadFrom(dir: string): string {
  const path = materializeCopy(vec0, dir);
  const db = new Database(":memory:");
  db.loadExtension(path);
  const version = db.query<{ v: string }, []>("SELECT vec_version() AS v").get()!.v;
  db.close();
  expect(version).toBe("v0.1.9");
  expect(existsSync(mark)).toBe(false);
  expectIntactCopy(path);
  return path;
}

function expectIntactCopy(path: string) {
  const st = lstatSync(path);
  expect(st.isFile()).toBe(true);
  expect(st.uid).toBe(process.geteuid!());
  expect(st.mode & 0o777).toBe(0o500);
  expect(readFileSync(path).equals(vec0Bytes)).toBe(true);
  for (const dir of [join(path, ".."), join(path, "../..")]) {
    const d = lstatSync(dir);
    expect(d.isDirectory()).toBe(true);
    expect(d.uid).toBe(process.geteuid!());
    expect(d.mode & 0o777).toBe(0o700);
  }
}

function plantFolders(d: ReturnType<typeof dataDir>, uid: number, mode = 0o755) {
  mkdirSync(d.own, { recursive: true });
  for (const p of [d.native, d.own]) {
    chownSync(p, uid, uid);
    chmodSync(p, mode);
  }
}

describe("native copies in DATA_DIR/native/<hash>/", () => {
  test("a fresh data folder gets a private copy that SQLite loads; a second start reuses it unchanged", () => {
    const d = dataDir();
    const path = loadFrom(d.dir);
    expect(path).toBe(join(realpathSync(d.dir), NATIVE_FOLDER, folderName, "vec0.so"));
    const inode = statSync(path).ino;
    expect(loadFrom(d.dir)).toBe(path);
    expect(statSync(path).ino).toBe(inode);
  });

  test("with the sha256 the build recorded, an intact copy is checked without reading the embedded file; a source that differs from it is never copied", () => {
    const d = dataDir();
    const digest = createHash("sha256").update(vec0Bytes).digest("hex");
    const path = materializeCopy(vec0, d.dir, digest);
    expect(materializeCopy({ source: join(d.dir, "absent"), name: "vec0.so" }, d.dir, digest)).toBe(path);
    expectIntactCopy(path);
    const e = dataDir();
    const wrong = createHash("sha256").update("something else").digest("hex");
    expect(() => materializeCopy(vec0, e.dir, wrong)).toThrow(
      "vec0.so: the embedded copy does not have the sha256 recorded when it was built",
    );
    expect(readdirSync(join(e.native, wrong.slice(0, 16)))).toEqual([]);
  });

  test("a planted library of ours with other bytes is replaced before it is loaded", () => {
    const d = dataDir();
    mkdirSync(d.own, { recursive: true, mode: 0o700 });
    copyFileSync(planted, d.target);
    chmodSync(d.target, 0o500);
    loadFrom(d.dir);
  });

  test("the right bytes are not enough: a copy owned by another user, or writable by others, is replaced", () => {
    for (const [uid, mode] of [
      [OTHER_UID, 0o500],
      [process.geteuid!(), 0o766],
    ] as const) {
      const d = dataDir();
      mkdirSync(d.own, { recursive: true, mode: 0o700 });
      copyFileSync(vec0.source, d.target);
      chownSync(d.target, uid, uid);
      chmodSync(d.target, mode);
      const before = statSync(d.target).ino;
      loadFrom(d.dir);
      expect(statSync(d.target).ino).not.toBe(before);
    }
  });

  test("folders pre-created by another user, holding their library, are moved aside: start-up succeeds", () => {
    const d = dataDir();
    plantFolders(d, OTHER_UID);
    copyFileSync(planted, d.target);
    chownSync(d.target, OTHER_UID, OTHER_UID);
    loadFrom(d.dir);
    // Nothing of theirs is left in the way (removed; as root, removable).
    expect(readdirSync(d.native).filter((e) => e.startsWith(".refused"))).toEqual([]);
  });

  /**
   * Bun, a bundle of `script` and vec0.so in `home`/kit, open to every user: the checkout may lie
   * in a private folder (a fresh `mktemp -d` clone), where another user reaches none of them.
   */
  async function kitForOtherUser(home: string, script: string): Promise<{ bun: string; entry: string; vec0: NativeLibrary }> {
    const kit = join(home, "kit");
    mkdirSync(kit, { mode: 0o755 });
    const bun = join(kit, "bun");
    try {
      linkSync(process.execPath, bun);
    } catch {
      copyFileSync(process.execPath, bun); // another file system
    }
    chmodSync(bun, 0o755);
    const library = join(kit, vec0.name);
    copyFileSync(vec0.source, library);
    chmodSync(library, 0o644);
    const source = join(kit, "script.ts");
    writeFileSync(source, script);
    const built = await Bun.build({ entrypoints: [source], target: "bun", outdir: kit, naming: "[name].bundle.js" });
    if (!built.success) throw new AggregateError(built.logs, "bundling the other user's script");
    const entry = join(kit, "script.bundle.js");
    chmodSync(entry, 0o644);
    return { bun, entry, vec0: { source: library, name: vec0.name } };
  }

  test("as an ordinary user too: another user's folder it cannot delete is moved aside, and start-up succeeds", async () => {
    // The service's own user, not root, meets a folder root (here: the other user) made.
    const home = tempDir("corpus-native-user-");
    chmodSync(home, 0o755);
    const dir = join(home, "data");
    mkdirSync(join(dir, NATIVE_FOLDER, folderName), { recursive: true });
    copyFileSync(planted, join(dir, NATIVE_FOLDER, folderName, "vec0.so"));
    chmodSync(join(dir, NATIVE_FOLDER), 0o755);
    chownSync(dir, OTHER_UID, OTHER_UID);
    chmodSync(dir, 0o700);
    const kit = await kitForOtherUser(
      home,
      `import { Database } from "bun:sqlite";
      import { materializeCopy } from ${JSON.stringify(join(import.meta.dir, "../../src/native/materialize"))};
      const db = new Database(":memory:");
      db.loadExtension(materializeCopy(JSON.parse(process.argv[2]), ${JSON.stringify(dir)}));
      console.log(db.query("SELECT vec_version() AS v").get().v);`,
    );
    const asUser = [
      "setpriv",
      `--reuid=${OTHER_UID}`,
      `--regid=${OTHER_UID}`,
      "--clear-groups",
      kit.bun,
      kit.entry,
      JSON.stringify(kit.vec0),
    ];
    const r = Bun.spawnSync(asUser, { cwd: home, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, TMPDIR: home } });
    expect(r.stderr.toString()).toBe("");
    expect(r.stdout.toString()).toBe("v0.1.9\n");
    const entries = readdirSync(dir);
    expect(entries.filter((e) => e.startsWith(".refused-native-"))).toHaveLength(1);
    expect(lstatSync(join(dir, NATIVE_FOLDER)).uid).toBe(OTHER_UID);
  });

  test("a folder of ours left open to others (0777) is closed, and what was planted in it replaced", () => {
    const d = dataDir();
    plantFolders(d, process.geteuid!(), 0o777);
    copyFileSync(planted, d.target);
    chownSync(d.target, OTHER_UID, OTHER_UID);
    loadFrom(d.dir);
  });

  /** A folder another user controls: whatever sits in it they may swap after our check. */
  function theirFolder() {
    const theirs = tempDir("corpus-theirs-");
    chownSync(theirs, OTHER_UID, OTHER_UID);
    chmodSync(theirs, 0o777);
    return theirs;
  }

  test("a link in place of the library is replaced by a file, even to a good copy of ours; its target is neither loaded nor written", () => {
    for (const [bytes, mode] of [
      [readFileSync(planted), 0o755],
      [vec0Bytes, 0o500],
    ] as const) {
      const d = dataDir();
      mkdirSync(d.own, { recursive: true, mode: 0o700 });
      const elsewhere = join(theirFolder(), "vec0.so");
      writeFileSync(elsewhere, bytes, { mode });
      symlinkSync(elsewhere, d.target);
      loadFrom(d.dir);
      expect(readFileSync(elsewhere).equals(bytes)).toBe(true);
    }
  });

  test("a link in place of either folder is replaced by a private folder, even to a 0700 folder of ours; what it pointed to is untouched", () => {
    for (const which of ["native", "own"] as const) {
      for (const ours of [false, true]) {
        const d = dataDir();
        let pointed = theirFolder();
        if (ours) mkdirSync((pointed = join(pointed, "ours")), { mode: 0o700 });
        if (which === "own") mkdirSync(d.native, { mode: 0o700 });
        symlinkSync(pointed, which === "native" ? d.native : d.own);
        loadFrom(d.dir);
        expect(lstatSync(d.native).isSymbolicLink()).toBe(false);
        expect(readdirSync(pointed)).toEqual([]);
      }
    }
  });

  test("a folder or a FIFO at the library's name is replaced without stalling", () => {
    const d = dataDir();
    mkdirSync(join(d.target, "inside"), { recursive: true });
    loadFrom(d.dir);
    const e = dataDir();
    mkdirSync(e.own, { recursive: true, mode: 0o700 });
    expect(Bun.spawnSync(["mkfifo", e.target]).exitCode).toBe(0);
    loadFrom(e.dir);
  });

  test("a new version's copy removes the folders of earlier copies of that file, and no other", () => {
    const d = dataDir();
    const older = join(d.native, "0123456789abcdef");
    const other = join(d.native, "fedcba9876543210");
    mkdirSync(older, { recursive: true, mode: 0o700 });
    mkdirSync(other, { mode: 0o700 });
    writeFileSync(join(older, "vec0.so"), "an older vec0");
    writeFileSync(join(other, "libonnxruntime.so.1"), "another library");
    loadFrom(d.dir);
    expect(existsSync(older)).toBe(false);
    expect(existsSync(other)).toBe(true);
  });
});

describe("a data folder another user could swap is refused with a clear message", () => {
  const refusal = (dir: string) => {
    try {
      materializeCopy(vec0, dir);
    } catch (error) {
      expect(error).toBeInstanceOf(DataFolderRefused);
      return (error as Error).message;
    }
    throw new Error("not refused");
  };

  test("owned by another user", () => {
    const dir = tempDir();
    chownSync(dir, OTHER_UID, OTHER_UID);
    expect(refusal(dir)).toBe(
      `the data folder ${dir} is not safe to use: it is owned by uid ${OTHER_UID}, not by this process (uid ${process.geteuid!()}); give the data folder to the user corpus runs as, or run corpus as its owner`,
    );
    expect(existsSync(join(dir, NATIVE_FOLDER))).toBe(false);
  });

  test("writable by others", () => {
    const dir = tempDir();
    chmodSync(dir, 0o777);
    expect(refusal(dir)).toContain("others may write to it (mode 0777)");
  });

  test("inside a folder others may write to (not sticky), or owned by another user", () => {
    const open = tempDir();
    chmodSync(open, 0o777);
    const inOpen = join(open, "data");
    mkdirSync(inOpen, { mode: 0o700 });
    expect(refusal(inOpen)).toContain(`above it, others may write to ${open} (mode 0777) and swap what is in it`);
    const theirs = tempDir();
    chownSync(theirs, OTHER_UID, OTHER_UID);
    const inTheirs = join(theirs, "data");
    mkdirSync(inTheirs, { mode: 0o700 });
    expect(refusal(inTheirs)).toContain(`above it, ${theirs} is owned by uid ${OTHER_UID}, who could swap what is in it`);
  });

  test("a sticky world-writable folder above (/tmp) is fine; a link to the data folder is resolved and its real path used", () => {
    const real = tempDir();
    chmodSync(real, 0o700);
    const link = join(tempDir(), "data-link");
    symlinkSync(real, link);
    expect(checkedDataDir(link)).toBe(realpathSync(real));
    expect(materializeCopy(vec0, link).startsWith(`${realpathSync(real)}/`)).toBe(true);
  });
});
