// Local paths of connectors (D23), attacked below the REST layer: roots per user, paths that
// do not exist, links put in place after a path was checked, files swapped between a scan
// and a read. Each attack plants a distinctive word outside the allowed folders and checks
// that nothing returns it.

import { Database } from "bun:sqlite";
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { linkSync, mkdirSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { filesSource } from "../../src/connectors/files/connector";
import { maildirSource } from "../../src/connectors/maildir/connector";
import {
  confine,
  isInside,
  isSafeSegment,
  type PathPolicy,
  PathRefused,
  readNoFollow,
  recheck,
  refusal,
  rootsFor,
  sharedRoots,
} from "../../src/connectors/paths";
import { SqlConnector } from "../../src/connectors/sql/connector";
import { tempDir } from "../helpers";

setDefaultTimeout(30_000);

const SECRET = "OUTSIDE-SECRET-4711";

/** A world: ROOT/{user} roots, bob's folder with a document, a data folder, and a folder outside with a secret. */
function world() {
  const base = realpathSync(tempDir("corpus-paths-"));
  const root = join(base, "roots");
  const bob = join(root, "bob");
  const docs = join(bob, "docs");
  mkdirSync(join(docs, "sub"), { recursive: true });
  mkdirSync(join(root, "alice"), { recursive: true });
  writeFileSync(join(docs, "note.txt"), "Quarterly plan for the quokka project.\n");
  writeFileSync(join(docs, "sub", "inner.txt"), "Quokka budget, inner folder.\n");
  const data = join(base, "data");
  mkdirSync(data);
  writeFileSync(join(data, "signing-key.json"), JSON.stringify({ kid: "DATA-KID-0042", note: "quokka" }));
  const outside = join(base, "outside");
  mkdirSync(outside);
  writeFileSync(join(outside, "secret.txt"), `quokka ${SECRET}\n`);
  writeFileSync(join(outside, "inner.txt"), `quokka ${SECRET}\n`);
  const policy = (user: string): PathPolicy => ({ dataDir: data, ...rootsFor([join(root, "{user}")], user) });
  return { base, root, bob, docs, data, outside, policy };
}

/** Replaces `path` by a link to `target`, as an attacker with write access to its folder would. */
function swapForLink(path: string, target: string) {
  renameSync(path, `${path}.moved`);
  symlinkSync(target, path);
}

/**
 * Scans bob's documents, then removes the scanned file `name` and puts a link to `target` in its
 * place: what reading that entry gives (its records as JSON, or the error's message).
 */
function readReplacedByLink(w: ReturnType<typeof world>, name: string, target: string): Promise<string> {
  const source = filesSource(w.docs, (p) => recheck(p, w.policy("bob")));
  const entries = source.scan();
  rmSync(join(w.docs, name));
  symlinkSync(target, join(w.docs, name));
  const entry = entries.find((e) => e.source === name)!;
  return source.read(entry).then(
    (rs) => JSON.stringify(rs),
    (e: Error) => e.message,
  );
}

const refusedWith = (fn: () => unknown, status: 400 | 403, message: RegExp) => {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(PathRefused);
    expect((error as PathRefused).status).toBe(status);
    expect((error as Error).message).toMatch(message);
    return;
  }
  throw new Error("expected a refusal");
};

describe("roots per user", () => {
  test("{user} is replaced by the subject; entries without it are shared", () => {
    expect(rootsFor(["/srv/{user}", "/srv/common"], "alice")).toEqual({ roots: ["/srv/alice", "/srv/common"] });
    expect(sharedRoots(["/srv/{user}", "/srv/common"])).toEqual(["/srv/common"]);
  });

  test("a subject that is not a safe folder name never reaches a {user} root", () => {
    for (const subject of ["..", ".", "x/../bob", "../bob", "a/b", "", " bob", "bob\n", "-x", "x".repeat(129)]) {
      expect([subject, isSafeSegment(subject)]).toEqual([subject, false]);
      const r = rootsFor(["/srv/{user}", "/srv/common"], subject);
      expect(r.roots).toEqual(["/srv/common"]);
      expect(r.unusable).toContain("cannot name a folder");
    }
    for (const subject of ["alice", "bob.smith@example.com", "u+1", "A-9_z"]) expect(isSafeSegment(subject)).toBe(true);
  });

  test("a folder whose name only starts like a root is not inside it", () => {
    expect(isInside("/srv/bobby/docs", "/srv/bob")).toBe(false);
    expect(isInside("/srv/bob", "/srv/bob")).toBe(true);
    expect(isInside("/srv/bob/docs", "/srv/bob")).toBe(true);
    expect(isInside("/anything", "/")).toBe(true);
  });

  test("alice may not add bob's folder, nor reach it through a link in her own", () => {
    const w = world();
    expect(confine(w.docs, w.policy("bob"))).toBe(w.docs);
    refusedWith(() => confine(w.docs, w.policy("alice")), 403, /outside the folders/);
    symlinkSync(w.bob, join(w.root, "alice", "to-bob"));
    refusedWith(() => confine(join(w.root, "alice", "to-bob", "docs"), w.policy("alice")), 403, /through a link\) is outside the folders/);
    // A subject that would climb out of ROOT/{user}.
    refusedWith(() => confine(w.docs, w.policy("x/../bob")), 403, /cannot name a folder/);
    refusedWith(() => confine(w.docs, w.policy("..")), 403, /cannot name a folder/);
  });

  test("a path that does not exist is refused; outside one's roots that is a 403, so existence is not revealed", () => {
    const w = world();
    refusedWith(() => confine(join(w.bob, "later"), w.policy("bob")), 400, /does not exist/);
    refusedWith(() => confine(join(w.bob, "later"), w.policy("alice")), 403, /outside/);
    refusedWith(() => confine(join(w.bob, "docs", "note.txt"), w.policy("alice")), 403, /outside/);
  });

  test("links in one's own folder to a missing and to an existing file outside are refused alike (no existence oracle)", () => {
    const w = world();
    symlinkSync(join(w.outside, "secret.txt"), join(w.bob, "to-existing"));
    symlinkSync(join(w.outside, "nothing.txt"), join(w.bob, "to-missing"));
    symlinkSync(join(w.bob, "to-missing"), join(w.bob, "to-link"));
    for (const link of ["to-existing", "to-missing", "to-link"])
      refusedWith(() => confine(join(w.bob, link), w.policy("bob")), 403, /outside/);
    symlinkSync(join(w.docs, "later.txt"), join(w.bob, "to-own-missing"));
    refusedWith(() => confine(join(w.bob, "to-own-missing"), w.policy("bob")), 400, /does not exist/);
  });

  test("the data folder, and any folder above it, is refused to everyone, the operator included", () => {
    const w = world();
    const operator: PathPolicy = { dataDir: w.data };
    refusedWith(() => confine(w.data, operator), 403, /data folder/);
    refusedWith(() => confine(join(w.data, "signing-key.json"), operator), 403, /data folder/);
    refusedWith(() => confine(w.base, operator), 403, /data folder/);
    symlinkSync(w.data, join(w.bob, "data-link"));
    refusedWith(() => confine(join(w.bob, "data-link"), w.policy("bob")), 403, /data folder/);
    // The operator is not bound by roots.
    expect(confine(w.outside, operator)).toBe(w.outside);
    expect(refusal(w.outside, w.outside, w.policy("bob"))).toMatch(/outside/);
  });

  test("a path kept as its realpath is refused once a link is put on the way, even to a folder inside the roots", () => {
    const w = world();
    const stored = confine(w.docs, w.policy("bob"));
    mkdirSync(join(w.bob, "other"));
    swapForLink(w.docs, join(w.bob, "other"));
    refusedWith(() => recheck(stored, w.policy("bob")), 403, /no longer leads/);
  });
});

describe("files and mail: links put in place after the check", () => {
  test("a folder swapped for a link between the scan and the read is not read", async () => {
    const w = world();
    const check = (p: string) => recheck(p, w.policy("bob"));
    const source = filesSource(w.docs, check);
    const entries = source.scan();
    expect(entries.map((e) => e.source).sort()).toEqual(["note.txt", "sub/inner.txt"]);
    swapForLink(join(w.docs, "sub"), w.outside);
    const inner = entries.find((e) => e.source === "sub/inner.txt")!;
    await expect(source.read(inner)).rejects.toThrow(/leads outside/);
  });

  test("a file swapped for a link between the scan and the read is not read (no link followed)", async () => {
    const w = world();
    expect(await readReplacedByLink(w, "note.txt", join(w.outside, "secret.txt"))).not.toContain(SECRET);
  });

  test("a file swapped for a link into the data folder is not read", async () => {
    const w = world();
    writeFileSync(join(w.docs, "keys.json"), JSON.stringify({ kid: "mine" }));
    expect(await readReplacedByLink(w, "keys.json", join(w.data, "signing-key.json"))).not.toContain("DATA-KID-0042");
  });

  test("the connector's own folder swapped for a link after the scan: reads are refused", async () => {
    const w = world();
    const source = filesSource(w.docs, (p) => recheck(p, w.policy("bob")));
    const entries = source.scan();
    mkdirSync(join(w.outside, "sub"));
    writeFileSync(join(w.outside, "note.txt"), `quokka ${SECRET}\n`);
    swapForLink(w.docs, w.outside);
    for (const e of entries) {
      const read = source.read(e).then(
        (rs) => JSON.stringify(rs),
        (err: Error) => err.message,
      );
      expect(await read).not.toContain(SECRET);
    }
  });

  test("links already in the folder are skipped by the walk, files and folders alike", () => {
    const w = world();
    symlinkSync(w.outside, join(w.docs, "linked-folder"));
    symlinkSync(join(w.outside, "secret.txt"), join(w.docs, "linked.txt"));
    symlinkSync(w.data, join(w.docs, "linked-data"));
    expect(
      filesSource(w.docs)
        .scan()
        .map((e) => e.source)
        .sort(),
    ).toEqual(["note.txt", "sub/inner.txt"]);
  });

  test("maildir: a message swapped for a link between the scan and the read is not read", async () => {
    const w = world();
    const mail = join(w.bob, "mail");
    mkdirSync(join(mail, "cur"), { recursive: true });
    writeFileSync(join(mail, "cur", "1.eml"), "From: a@example.com\nSubject: quokka\n\nHello.\n");
    writeFileSync(join(w.outside, "stolen.eml"), `From: x@example.com\nSubject: quokka\n\n${SECRET}\n`);
    const source = maildirSource(mail, (p) => recheck(p, w.policy("bob")));
    const [entry] = source.scan();
    rmSync(join(mail, "cur", "1.eml"));
    symlinkSync(join(w.outside, "stolen.eml"), join(mail, "cur", "1.eml"));
    const read = source.read(entry!).then(
      (rs) => JSON.stringify(rs),
      (e: Error) => e.message,
    );
    expect(await read).not.toContain(SECRET);
    symlinkSync(join(w.outside, "stolen.eml"), join(mail, "cur", "2.eml"));
    expect(source.scan().map((e) => e.source)).toEqual([]);
  });

  test("a FIFO swapped in for a file between the scan and the read does not stall the server", () => {
    const w = world();
    // In a child process: a blocking open would stall the whole runner, as it would the server.
    const script = join(w.base, "read-fifo.ts");
    writeFileSync(
      script,
      `import { rmSync } from "node:fs";
      import { filesSource } from ${JSON.stringify(resolve(import.meta.dir, "../../src/connectors/files/connector"))};
      const dir = ${JSON.stringify(w.docs)};
      const source = filesSource(dir);
      const entry = source.scan().find((e) => e.source === "note.txt")!;
      rmSync(dir + "/note.txt");
      Bun.spawnSync(["mkfifo", dir + "/note.txt"]);
      await source.read(entry).then(() => console.log("read"), () => console.log("refused"));`,
    );
    const run = Bun.spawnSync([process.execPath, script], { timeout: 10_000 });
    expect(run.stdout.toString().trim()).toBe("refused");
  });

  test("a FIFO put in place of a file is not listed, nor opened", () => {
    const w = world();
    const fifo = join(w.docs, "pipe.txt");
    expect(Bun.spawnSync(["mkfifo", fifo]).exitCode).toBe(0);
    expect(() => readNoFollow(fifo, w.docs)).toThrow(/not a regular file/);
    expect(
      filesSource(w.docs)
        .scan()
        .map((e) => e.source),
    ).not.toContain("pipe.txt");
  });
});

describe("SQLite: checked again each time the file is opened", () => {
  function shop(path: string, city: string) {
    const db = new Database(path);
    db.exec("CREATE TABLE invoice (id INTEGER PRIMARY KEY, city TEXT)");
    db.query("INSERT INTO invoice (city) VALUES (?)").run(city);
    db.close();
  }
  const tables = [{ name: "invoice", id: "id", title: "city", text: ["city"] }];
  const ask = { terms: ["quokka"], phrases: [], limit: 10 };

  test("a database file swapped for a link after it was added is not opened", async () => {
    const w = world();
    const file = join(w.bob, "shop.sqlite");
    shop(file, "quokka town");
    shop(join(w.outside, "other.sqlite"), `quokka ${SECRET}`);
    const stored = confine(file, w.policy("bob"));
    swapForLink(file, join(w.outside, "other.sqlite"));
    const c = new SqlConnector({ url: stored, tables }, (p) => recheck(p, w.policy("bob")));
    const status = await c.health();
    expect(status.status).toBe("error");
    expect(status.reason).toMatch(/through a link|no longer leads/);
    const found = await c.search(ask).then(
      (rs) => JSON.stringify(rs),
      (e: Error) => e.message,
    );
    expect(found).not.toContain(SECRET);
    await c.close();
  });

  test("an operator's database may not be the service's own", async () => {
    const w = world();
    const own = join(w.data, "corpus.db");
    shop(own, `quokka ${SECRET}`);
    const c = new SqlConnector({ url: own, tables }, (p) => confine(p, { dataDir: w.data }));
    expect(await c.health()).toMatchObject({ status: "error", reason: expect.stringMatching(/data folder/) });
    await c.close();
  });

  test("a database whose WAL is a hard link to another database's WAL is not opened", async () => {
    const w = world();
    const theirs = join(w.outside, "theirs.sqlite");
    const db = new Database(theirs);
    db.exec("PRAGMA journal_mode = WAL");
    db.exec("CREATE TABLE invoice (id INTEGER PRIMARY KEY, city TEXT)");
    db.query("INSERT INTO invoice (city) VALUES (?)").run(`quokka ${SECRET}`);
    const file = join(w.bob, "own.sqlite");
    shop(file, "quokka town");
    linkSync(`${theirs}-wal`, `${file}-wal`);
    const c = new SqlConnector({ url: confine(file, w.policy("bob")), tables }, (p) => recheck(p, w.policy("bob")));
    expect(await c.health()).toMatchObject({ status: "error", reason: expect.stringMatching(/hard links/) });
    const found = await c.search(ask).then(
      (rs) => JSON.stringify(rs),
      (e: Error) => e.message,
    );
    expect(found).not.toContain(SECRET);
    await c.close();
    db.close();
  });

  test("a view that never ends is refused before it is queried (it would stall every request)", async () => {
    const w = world();
    const file = join(w.bob, "endless.sqlite");
    const db = new Database(file);
    db.exec(
      "CREATE VIEW invoice AS WITH RECURSIVE n(id, city) AS (SELECT 1, 'quokka' UNION ALL SELECT id + 1, city FROM n) SELECT id, city FROM n",
    );
    db.close();
    const c = new SqlConnector({ url: confine(file, w.policy("bob")), tables }, (p) => recheck(p, w.policy("bob")));
    expect(await c.health()).toMatchObject({ status: "error", reason: expect.stringMatching(/view or a virtual table/) });
    await c.close();
  });
});

describe("hard links", () => {
  test("a file hard-linked into one's own folder (another's file, the server's key) is not read", () => {
    const w = world();
    linkSync(join(w.outside, "secret.txt"), join(w.docs, "stolen.txt"));
    const source = filesSource(w.docs, (p) => recheck(p, w.policy("bob")));
    refusedWith(() => readNoFollow(join(w.docs, "stolen.txt")), 403, /hard links/);
    const entry = source.scan().find((e) => e.source === "stolen.txt");
    expect(entry).toBeDefined();
    expect(source.read(entry!)).rejects.toBeInstanceOf(PathRefused);
  });
});
