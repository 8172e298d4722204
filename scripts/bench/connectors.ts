// Search latency per connector kind on the shared data, and the files connector's indexing
// (issue: connectors). Starts the test servers (scripts/test-servers.sh) when needed.
//   bun scripts/bench/connectors.ts
import { randomBytes } from "node:crypto";
import { cpSync, existsSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createFilesConnector } from "../../src/connectors/files/connector";
import { ImapConnector } from "../../src/connectors/imap/connector";
import { EmbeddedIndex, indexKeysFor, indexMigrations } from "../../src/connectors/local-index";
import { createMaildirConnector } from "../../src/connectors/maildir/connector";
import { SqlConnector } from "../../src/connectors/sql/connector";
import type { Connector, RetrievalRequest } from "../../src/connectors/types";
import { cryptoMigrations, UserKeys } from "../../src/crypto/user-keys";
import { allowList, pinner } from "../../src/net/pin";
import { openDatabase } from "../../src/store/database";
import { CHINOOK_SQLITE, chinookCustomers, chinookInvoices } from "../../test/support/chinook";
import { runTempDir } from "./lib";

const root = join(import.meta.dir, "../..");
const data = join(root, "../shared/data");
const state = process.env.CORPUS_TEST_STATE ?? "/tmp/corpus-test-servers";
if (!existsSync(join(state, "env")))
  Bun.spawnSync(["bash", join(root, "scripts/test-servers.sh"), "start"], { stdout: "ignore", stderr: "inherit" });
const env = Object.fromEntries(
  readFileSync(join(state, "env"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
);

const key = randomBytes(32);
const db = openDatabase(runTempDir("corpus-bench-conn-"), [...cryptoMigrations, ...indexMigrations]);
const keys = new UserKeys(db, key);
const index = (owner: string) => new EmbeddedIndex(db, owner, indexKeysFor(keys, "alice", owner, true));

const questions: RetrievalRequest[] = [
  { terms: ["california", "price", "caps"], phrases: [], limit: 10 },
  { terms: ["invoice", "total"], phrases: [], limit: 10 },
  { terms: ["germany"], phrases: [], limit: 10, dateFrom: new Date("2021-01-01"), dateTo: new Date("2022-01-01") },
  { terms: ["meeting", "friday"], phrases: [], limit: 10 },
];

async function latency(name: string, c: Connector, runs = 40) {
  for (const q of questions) await c.search(q);
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await c.search(questions[i % questions.length]!);
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  const p = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!;
  console.log(`${name.padEnd(28)} median ${p(0.5).toFixed(1).padStart(7)} ms   p99 ${p(0.99).toFixed(1).padStart(7)} ms`);
}

console.log("search latency (4 questions, 40 runs each, after the first index)");
const maildir = createMaildirConnector(join(data, "enron", "messages"), index("bench/maildir"));
await maildir.sync();
await latency("maildir (Enron, 1702 .eml)", maildir);

const invoices = runTempDir("corpus-bench-files-");
cpSync(join(data, "invoices"), invoices, { recursive: true });
let t0 = performance.now();
const files = createFilesConnector(invoices, index("bench/files"));
await files.sync();
const firstIndex = performance.now() - t0;
await latency("files (invoices, 37 docs)", files);

// The test servers listen on loopback: allowed as CORPUS_CONNECTOR_ALLOW_HOSTS=127.0.0.1 would.
const loopback = { pin: pinner(allowList("127.0.0.1")) };
const imap = new ImapConnector(
  {
    host: env.CORPUS_TEST_IMAP_HOST!,
    port: Number(env.CORPUS_TEST_IMAP_PORT),
    secure: false,
    user: env.CORPUS_TEST_IMAP_USER!,
    password: env.CORPUS_TEST_IMAP_PASSWORD!,
    mailbox: "INBOX",
  },
  loopback,
);
await latency("imap (Dovecot, 1702 mails)", imap, 20);
await imap.close();

const customerColumns = ["FirstName", "LastName", "Company", "Country"];
const lite = new SqlConnector({ url: CHINOOK_SQLITE, tables: [chinookInvoices(), chinookCustomers(customerColumns)] });
await latency("sql (Chinook, SQLite)", lite);
await lite.close();
const pg = new SqlConnector(
  { url: env.CORPUS_TEST_PG_URL!, tables: [chinookInvoices("postgres"), chinookCustomers(customerColumns, "postgres")] },
  undefined,
  loopback,
);
await latency("sql (Chinook, PostgreSQL)", pg);
await pg.close();
const mariadb = new SqlConnector(
  { url: env.CORPUS_TEST_MYSQL_URL!, tables: [chinookInvoices("mysql"), chinookCustomers(customerColumns, "mysql")] },
  undefined,
  loopback,
);
await latency("sql (Chinook, MariaDB)", mariadb);
await mariadb.close();

writeFileSync(
  join(invoices, "Orlen.txt"),
  `${readFileSync(join(invoices, "Orlen.txt"), "utf8")}\nPaid by transfer, reference zq${Date.now()}.\n`,
);
utimesSync(join(invoices, "Orlen.txt"), new Date(), new Date(Date.now() + 2000));
t0 = performance.now();
await files.sync();
const change = performance.now() - t0;
console.log(`files: first index of the folder ${firstIndex.toFixed(0)} ms; one changed file picked up in ${change.toFixed(1)} ms`);
