// D19 "files are opened for reading only; a test shows each": the files, maildir, books and SQLite
// connectors, run by a real `corpus serve` under strace, index a folder of text, PDF, DOCX, XLSX,
// ODS, ODT and PPTX, a SQLite database, a folder of accounting journals (D34, a GnuCash SQLite book among them) and a Maildir (messages in new/, where a mail client would move them to cur/
// and flag them seen). Every system call that could change a file is traced with its paths
// (`-y` names the file behind each descriptor): none touches the folder, and no open of a file
// in it asks for writing. Afterwards every file's bytes, mode and mtime, and every folder's
// entries and mtime, are as before.

import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { copyFileSync, lstatSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { type Corpus, cli, FIXED_ISSUER, newMasterKey, startCorpus, until } from "../backup/support";
import { tempDir } from "../helpers";
import { taxreportSqlite } from "../support/gnucash-sqlite";
import { OFFICE_FIXTURES, pptx } from "../support/office";
import { SHARED_DATA } from "../support/servers";

setDefaultTimeout(240_000);

const SHARED = SHARED_DATA;
const root = tempDir("corpus-read-only-");
const source = join(root, "source");
const straceLog = join(root, "strace.log");
const env = {
  ...FIXED_ISSUER,
  CORPUS_DATA_DIR: join(root, "data"),
  CORPUS_MASTER_KEY: newMasterKey(),
  CORPUS_CONNECTORS_FILE: join(root, "connectors.json"),
};

/** System calls that change a file or folder (by path or by descriptor), and the opens. */
const TRACED = [
  "open",
  "openat",
  "openat2",
  "creat",
  "write",
  "pwrite64",
  "writev",
  "pwritev",
  "pwritev2",
  "truncate",
  "ftruncate",
  "fallocate",
  "rename",
  "renameat",
  "renameat2",
  "unlink",
  "unlinkat",
  "link",
  "linkat",
  "symlink",
  "symlinkat",
  "mkdir",
  "mkdirat",
  "rmdir",
  "chmod",
  "fchmod",
  "fchmodat",
  "chown",
  "fchown",
  "fchownat",
  "lchown",
  "utime",
  "utimes",
  "utimensat",
  "futimesat",
  "setxattr",
  "lsetxattr",
  "fsetxattr",
  "removexattr",
  "lremovexattr",
  "fremovexattr",
  "mknod",
  "mknodat",
];
const BY_DESCRIPTOR = new Set([
  "write",
  "pwrite64",
  "writev",
  "pwritev",
  "pwritev2",
  "ftruncate",
  "fallocate",
  "fchmod",
  "fchown",
  "fsetxattr",
  "fremovexattr",
]);
const WRITE_FLAGS = /O_WRONLY|O_RDWR|O_CREAT|O_TRUNC|O_APPEND/;

type Snapshot = Map<string, string>;

/** Every entry under `dir`: a file's bytes, mode and mtime; a folder's entries, mode and mtime. */
function snapshot(dir: string, into: Snapshot = new Map()): Snapshot {
  const s = lstatSync(dir, { bigint: true });
  const names = readdirSync(dir).sort();
  into.set(dir, `dir ${s.mode} ${s.mtimeNs} ${names.join("/")}`);
  for (const name of names) {
    const path = join(dir, name);
    const st = lstatSync(path, { bigint: true });
    if (st.isDirectory()) snapshot(path, into);
    else into.set(path, `file ${st.mode} ${st.mtimeNs} ${new Bun.CryptoHasher("sha256").update(readFileSync(path)).digest("hex")}`);
  }
  return into;
}

async function buildSource(): Promise<void> {
  const docs = join(source, "docs");
  mkdirSync(docs, { recursive: true });
  writeFileSync(join(docs, "lease.txt"), "The quarnflick lease of the Lisbon office ends in March.\n");
  for (const name of ["AmazonWebServices.pdf", "FlipkartInvoice.pdf"]) copyFileSync(join(SHARED, "invoices", name), join(docs, name));
  const docx = readdirSync(join(SHARED, "invoices")).find((n) => n.endsWith(".docx"));
  if (docx) copyFileSync(join(SHARED, "invoices", docx), join(docs, docx));
  for (const name of ["invoices.xlsx", "stock.ods", "agreement.odt"]) copyFileSync(join(OFFICE_FIXTURES, name), join(docs, name));
  writeFileSync(join(docs, "deck.pptx"), await pptx());
  // A Maildir: unread mail in new/, read mail in cur/ (flag suffix), tmp/ empty.
  const mail = join(source, "mail");
  for (const sub of ["new", "cur", "tmp"]) mkdirSync(join(mail, sub), { recursive: true });
  const enron = join(SHARED, "enron", "messages");
  readdirSync(enron)
    .filter((n) => n.endsWith(".eml"))
    .slice(0, 6)
    .forEach((name, i) =>
      copyFileSync(join(enron, name), i < 3 ? join(mail, "new", `${i}.corpus-test`) : join(mail, "cur", `${i}.corpus-test:2,S`)),
    );
  writeFileSync(
    join(mail, "new", "9.corpus-test"),
    "From: ana@example.com\nTo: bo@example.com\nSubject: blorptangle audit\nDate: Mon, 2 Mar 2026 10:00:00 +0000\nMessage-ID: <blorp@example.com>\n\nThe blorptangle audit is on Friday.\n",
  );
  // Accounting books: a beancount journal of our own and a GnuCash book gzip-compressed, as GnuCash keeps it.
  const books = join(source, "books");
  mkdirSync(books);
  writeFileSync(
    join(books, "main.beancount"),
    '2026-03-02 * "Glimmerhawk Traders" "Vellumquist binders"\n  Expenses:Office  42.10 EUR\n  Assets:Bank\n',
  );
  writeFileSync(join(books, "taxreport.gnucash"), gzipSync(readFileSync(join(SHARED, "accounting", "gnucash", "taxreport.gnucash"))));
  // The same book as GnuCash saves it in SQLite.
  writeFileSync(join(books, "taxreport-sqlite.gnucash"), taxreportSqlite());
  // A SQLite file, read by the sql connector.
  const db = new Database(join(source, "shop.sqlite"));
  db.run("CREATE TABLE orders (id INTEGER PRIMARY KEY, customer TEXT, note TEXT)");
  db.run("INSERT INTO orders VALUES (1, 'Zed', 'snorkeldrift order of six lamps')");
  db.close();
  writeFileSync(
    env.CORPUS_CONNECTORS_FILE,
    JSON.stringify([
      { id: "docs", kind: "files", config: { path: docs } },
      { id: "mail", kind: "maildir", config: { path: mail } },
      { id: "books", kind: "books", config: { path: books } },
      {
        id: "shop",
        kind: "sql",
        config: { url: join(source, "shop.sqlite"), tables: [{ name: "orders", id: "id", title: "customer", text: ["note"] }] },
      },
    ]),
  );
}

let server: Corpus | undefined;
let token = "";
let before: Snapshot;

const ask = async (query: string) => {
  const r = await fetch(`${server!.url}/v1/query`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ query, max_results: 3 }),
  });
  expect(r.status).toBe(200);
  return JSON.stringify(await r.json());
};

/** The server's own pid: strace's child. */
const tracee = async (stracePid: number) => Number((await Bun.$`pgrep -P ${stracePid}`.text()).trim().split("\n")[0]);

beforeAll(async () => {
  await buildSource();
  before = snapshot(source);
  const created = await cli(["token", "create", "--user", "alice", "--scopes", "corpus:search,connectors:read"], env);
  expect(created.code).toBe(0);
  token = created.stdout.trim();
  server = await startCorpus(env, [
    "strace",
    "-f",
    "-qq",
    "-y",
    "-s",
    "256",
    "-o",
    straceLog,
    "-e",
    `trace=${TRACED.join(",")}`,
    "-e",
    "signal=none",
  ]);
  await until("the four connectors to be indexed", async () => {
    const r = await fetch(`${server!.url}/v1/connectors`, { headers: { authorization: `Bearer ${token}` } });
    const list = ((await r.json()) as { connectors: Array<{ id: string; status: string }> }).connectors;
    return list.length === 4 && list.every((c) => c.status === "ok") ? true : undefined;
  });
});

afterAll(async () => {
  if (server && server.proc.exitCode === null) {
    process.kill(await tracee(server.proc.pid), "SIGTERM");
    await server.proc.exited;
  }
});

describe("connectors never write to what they read (D19)", () => {
  test("every source was read: a question finds each", async () => {
    expect(await ask("quarnflick lease Lisbon")).toContain("quarnflick");
    expect(await ask("blorptangle audit")).toContain("blorptangle");
    expect(await ask("snorkeldrift lamps order")).toContain("snorkeldrift");
    expect(await ask("Glimmerhawk vellumquist binders")).toContain("Glimmerhawk");
    expect(await ask("Umbrella Pharma invoice")).toContain("Umbrella Pharma");
    expect(await ask("Porto Roasters espresso beans")).toContain("Porto Roasters");
    expect(await ask("payable within 30 days fee agreement")).toContain("Payable within");
    expect(await ask("Q3 review revenue slide")).toContain("Revenue up 12");
  });

  test("no system call changed or opened for writing anything in the folder (strace)", async () => {
    // Stopped first, so the log is complete.
    process.kill(await tracee(server!.proc.pid), "SIGTERM");
    expect(await server!.proc.exited).toBe(0);
    const lines = readFileSync(straceLog, "utf8").split("\n");
    const opens = lines.filter((l) => /\bopen(at2?)?\(/.test(l) && l.includes(source));
    // The trace saw the reads: the check below is not vacuous.
    expect(opens.some((l) => l.includes("lease.txt"))).toBe(true);
    expect(opens.some((l) => l.includes("9.corpus-test"))).toBe(true);
    expect(opens.some((l) => l.includes("shop.sqlite"))).toBe(true);
    expect(opens.some((l) => l.includes("main.beancount"))).toBe(true);
    expect(opens.some((l) => l.includes("taxreport.gnucash"))).toBe(true);
    for (const name of ["invoices.xlsx", "stock.ods", "agreement.odt", "deck.pptx", "taxreport-sqlite.gnucash"])
      expect(opens.some((l) => l.includes(name))).toBe(true);
    const writes = lines.filter((line) => {
      const call = /^\d+\s+(\w+)\((.*)$/.exec(line);
      if (!call) return false;
      const [, name, args] = call as unknown as [string, string, string];
      // By descriptor: the file behind it, as -y names it (the data written is not looked at).
      if (BY_DESCRIPTOR.has(name)) return args.startsWith(`${/^\d+/.exec(args)?.[0]}<${source}`);
      const touches = args.includes(`"${source}`) || args.includes(`<${source}`);
      return touches && (!/^open/.test(name) || WRITE_FLAGS.test(args));
    });
    expect(writes).toEqual([]);
  });

  test("every file's bytes, mode and mtime, and every folder's entries, are as before", () => {
    expect(snapshot(source)).toEqual(before);
  });
});
