// D30 end to end, with real processes: `corpus backup` run while a live `corpus serve` answers
// questions from four concurrent clients; the backup restored into an empty folder; a server
// started there with the same master key finds every question archived in the snapshot through
// /v1/deep_search, and none asked after it. The backup file holds neither the master key nor a
// word of the indexed files.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../helpers";
import { type Corpus, cli, FIXED_ISSUER, newMasterKey, startCorpus, until } from "./support";

setDefaultTimeout(240_000);

/** One document per topic, each with a made-up word no chance text holds (nor its first six letters). */
const TOPICS = [
  { word: "zorblaxian", text: "The zorblaxian shipment of copper cable leaves the Rotterdam warehouse every Tuesday morning." },
  { word: "quixotrumph", text: "Quixotrumph invoice 4411 for cloud hosting came to 1,250 EUR and was paid on the third of March." },
  { word: "flumbergast", text: "The flumbergast board meeting approved hiring two nurses for the night shift at the clinic." },
  { word: "vortiganzel", text: "Vortiganzel is the code name of the new mobile banking app; its beta ships to testers in June." },
  { word: "snarkwhistle", text: "The snarkwhistle lease of the Berlin office ends in December and rent rises by eight percent." },
  { word: "gribbleford", text: "Gribbleford's tomato harvest was ruined by hail; the insurance claim covers the greenhouse roof." },
  { word: "plonkavish", text: "The plonkavish marathon route closes the river bridge to cars between six and noon on Sunday." },
  { word: "wumbleprax", text: "Wumbleprax, the chess club, meets on Thursdays in the library basement for blitz tournaments." },
];
const question = (i: number, tag: string) => `what does the ${TOPICS[i]!.word} note say? (${tag})`;

const masterKey = newMasterKey();
const root = tempDir("corpus-backup-online-");
const docs = join(root, "docs");
const dataDir = join(root, "data");
const restoredDir = join(root, "restored");
const backupFile = join(root, "backups", "corpus.backup");
const env = (dir: string) => ({
  ...FIXED_ISSUER,
  CORPUS_DATA_DIR: dir,
  CORPUS_MASTER_KEY: masterKey,
  CORPUS_CONNECTORS_FILE: join(root, "connectors.json"),
  CORPUS_LIMIT_QUERY_PER_MINUTE: "100000",
  CORPUS_LIMIT_DEEP_SEARCH_PER_MINUTE: "100000",
});

let live: Corpus | undefined;
let restored: Corpus | undefined;
let token: string;

const post = (server: Corpus, path: string, body: unknown) =>
  fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });

/** Asks question `q`; its query_id when answered 200, else the status. */
async function ask(server: Corpus, q: string): Promise<{ id?: string; status: number }> {
  const r = await post(server, "/v1/query", { query: q, max_results: 1 });
  return r.status === 200 ? { id: ((await r.json()) as { query_id: string }).query_id, status: 200 } : { status: r.status };
}

beforeAll(async () => {
  mkdirSync(docs, { recursive: true });
  mkdirSync(join(root, "backups"));
  TOPICS.forEach((t, i) => writeFileSync(join(docs, `note-${i}.txt`), `${t.text}\n`));
  writeFileSync(join(root, "connectors.json"), JSON.stringify([{ id: "docs", kind: "files", config: { path: docs } }]));
  const created = await cli(["token", "create", "--user", "alice", "--scopes", "corpus:search,corpus:read,connectors:read"], env(dataDir));
  expect(created.code).toBe(0);
  token = created.stdout.trim();
  live = await startCorpus(env(dataDir));
  // The folder indexed and embedded: the connector says ok.
  await until("the docs connector to be indexed", async () => {
    const r = await fetch(`${live!.url}/v1/connectors`, { headers: { authorization: `Bearer ${token}` } });
    const list = ((await r.json()) as { connectors: Array<{ id: string; status: string }> }).connectors;
    return list.find((c) => c.id === "docs")?.status === "ok" ? true : undefined;
  });
});

afterAll(async () => {
  await live?.stop();
  await restored?.stop();
});

describe("a backup taken while questions are answered (D30)", () => {
  const before: string[] = [];
  const during: string[] = [];
  const after: string[] = [];
  let backupRun: Awaited<ReturnType<typeof cli>>;
  /** Answers of the concurrent clients acknowledged before the backup process started. */
  let answeredBefore = 0;

  test("corpus backup runs beside the live server: every question meanwhile is answered 200", async () => {
    for (let i = 0; i < TOPICS.length; i++) {
      const r = await ask(live!, question(i, "before"));
      expect(r.status).toBe(200);
      before.push(r.id!);
    }
    let running = true;
    const failures: number[] = [];
    let n = 0;
    const client = async () => {
      while (running) {
        const r = await ask(live!, question(n % TOPICS.length, `during ${n++}`));
        if (r.id) during.push(r.id);
        else failures.push(r.status);
      }
    };
    const clients = [client(), client(), client(), client()];
    // Questions are in flight before the backup starts and until it has ended.
    await until("the first answer under load", async () => (during.length > 0 ? true : undefined));
    answeredBefore = during.length;
    backupRun = await cli(["backup", "--out", backupFile], env(dataDir));
    const answeredWhile = during.length - answeredBefore;
    running = false;
    await Promise.all(clients);
    expect(backupRun.stderr).toBe("");
    expect(backupRun.code).toBe(0);
    expect(failures).toEqual([]);
    expect(answeredWhile).toBeGreaterThan(0);
    for (let i = 0; i < TOPICS.length; i++) {
      const r = await ask(live!, question(i, "after"));
      expect(r.status).toBe(200);
      after.push(r.id!);
    }
    const report = JSON.parse(backupRun.stdout) as { out: string; bytes: number; files: Array<{ name: string }> };
    expect(report.out).toBe(backupFile);
    expect(report.bytes).toBe(statSync(backupFile).size);
    expect(report.files.map((f) => f.name)).toEqual(["corpus.db", "signing-key.json"]);
    expect(statSync(backupFile).mode & 0o777).toBe(0o600);
    // One file, nothing half-written beside it.
    expect(readdirSync(join(root, "backups"))).toEqual(["corpus.backup"]);
  });

  test("the file holds neither the master key nor any word of the indexed files", () => {
    const bytes = readFileSync(backupFile);
    const text = bytes.toString("latin1").toLowerCase();
    const key = Buffer.from(masterKey, "base64");
    expect(bytes.includes(key)).toBe(false);
    expect(text.includes(masterKey.toLowerCase())).toBe(false);
    for (const t of TOPICS) {
      expect(text.includes(t.word)).toBe(false);
      expect(text.includes(t.word.slice(0, 6))).toBe(false);
    }
    // Nor the documents' other words, nor their names.
    for (const w of ["rotterdam", "greenhouse", "tomato", "marathon", "note-0.txt"]) expect(text.includes(w)).toBe(false);
  });

  test("restored into an empty folder: 0700, database 0600, integrity ok, only the database and the signing key", async () => {
    mkdirSync(restoredDir, { mode: 0o755 });
    const r = await cli(["restore", "--from", backupFile], env(restoredDir));
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as { integrity_check: string; master_key: string; pending_migrations: string[] };
    expect(report.integrity_check).toBe("ok");
    expect(report.master_key).toBe("opens the signing key and 2 user data keys");
    expect(report.pending_migrations).toEqual([]);
    expect(readdirSync(restoredDir).sort()).toEqual(["corpus.db", "signing-key.json"]);
    expect(statSync(restoredDir).mode & 0o777).toBe(0o700);
    expect(statSync(join(restoredDir, "corpus.db")).mode & 0o777).toBe(0o600);
    expect(statSync(join(restoredDir, "signing-key.json")).mode & 0o777).toBe(0o600);
    const db = new Database(join(restoredDir, "corpus.db"), { readonly: true });
    expect(db.query("PRAGMA integrity_check").all()).toEqual([{ integrity_check: "ok" }]);
    db.close();
  });

  test("a server on the restored folder, same master key, finds every archived question and none asked after the backup", async () => {
    const db = new Database(join(restoredDir, "corpus.db"), { readonly: true });
    const archived = new Set(
      db
        .query<{ query_id: string }, []>("SELECT query_id FROM archive_queries WHERE user_id = 'alice'")
        .all()
        .map((r) => r.query_id),
    );
    db.close();
    // The snapshot is one moment: everything answered before the backup, part of what was
    // answered during it, nothing after.
    for (const id of [...before, ...during.slice(0, answeredBefore)]) expect(archived.has(id)).toBe(true);
    for (const id of after) expect(archived.has(id)).toBe(false);
    for (const id of archived) expect([...before, ...during].includes(id)).toBe(true);

    await live!.stop();
    live = undefined;
    restored = await startCorpus(env(restoredDir));
    // Vectors still owed for answers given just before the snapshot are resumed on start.
    const found = await until("every archived question to be found by deep_search", async () => {
      const ids = new Set<string>();
      for (const t of TOPICS) {
        const r = await post(restored!, "/v1/deep_search", { query: t.text, max_results: 50 });
        expect(r.status).toBe(200);
        for (const hit of ((await r.json()) as { archive_results: Array<{ original_query_id: string }> }).archive_results)
          ids.add(hit.original_query_id);
      }
      return [...archived].every((id) => ids.has(id)) ? ids : undefined;
    });
    expect([...found].sort()).toEqual([...archived].sort());
  });
});
