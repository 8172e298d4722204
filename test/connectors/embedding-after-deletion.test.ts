// Attack on a folder connector's embedding (indexed-source.ts embedLoop -> setVectors) and a
// user's deletion (D13, D25: "nothing of theirs is written after"). The deletion erases the
// user's index rows first, then closes their connectors one after another, each awaited
// (registry closeUser): while the first one's close waits for its queued batch, the second is
// still open, and the batch it had in the worker comes back. The embedding service keeps it out
// of the cache (generation), but hands the vectors back; embedLoop then stores them with
// setVectors, which checks only that a chunk of that number exists (chunk ids are reused:
// INTEGER PRIMARY KEY) and rotates with the user's key of that moment. The archive's pending
// vectors were fixed for exactly this (their own row, query and user); the folder's were not.
import { expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { EmbeddedIndex, indexKeysFor } from "../../src/connectors/local-index";
import type { OwnerEmbeddings } from "../../src/embedding/service";
import { bearer, req, tempDir, tokenFor } from "../helpers";
import { type App, appPerTest } from "../support/app-per-test";
import { soon } from "../support/wait";

setDefaultTimeout(180_000);

const newApp = appPerTest();
let t: App;

const mail = (i: number, subject: string, body: string) =>
  `Message-ID: <${i}@example.com>\r\nFrom: jeff@example.com\r\nTo: alice@example.com\r\nDate: Tue, 12 Jun 2001 10:00:00 +0000\r\nSubject: ${subject} ${i}\r\n\r\n${body}\r\n`;

function maildir(roots: string, name: string, subject: string, body: string): string {
  const dir = join(roots, "alice", name);
  mkdirSync(join(dir, "cur"), { recursive: true });
  writeFileSync(join(dir, "cur", "1.x:2,S"), mail(1, subject, body));
  return dir;
}

test("attack: a deleted user's folder batch, in the worker at the deletion, is stored after it into another owner's reused chunk", async () => {
  const roots = tempDir("corpus-embed-deletion-");
  const first = maildir(roots, "first", "Lighthouse", "The lighthouse keeper retires in spring.");
  const second = maildir(roots, "second", "Harbour", "The harbour audit is due on Friday.");
  t = await newApp({ CORPUS_CONNECTOR_ROOTS: join(roots, "{user}") });
  const { services } = t;
  const token = await tokenFor(services, "alice", ["corpus:search", "connectors:write", "connectors:read"]);

  // Each connector's batches held where the registry hands them to the service, to send them in
  // a chosen order: the second connector's batch first.
  const held: Array<{ texts: string[]; pass: () => void }> = [];
  const forOwner = services.embeddings.forOwner.bind(services.embeddings);
  services.embeddings.forOwner = (owner) => {
    const real = forOwner(owner);
    return {
      embed: async (texts, priority) => {
        await new Promise<void>((pass) => held.push({ texts, pass }));
        return real.embed(texts, priority);
      },
    } satisfies OwnerEmbeddings;
  };
  // The model's background runs held too: a batch stays in the worker while the deletion runs.
  const service = services.embeddings as unknown as { load(): Promise<{ run(job: unknown, urgent: boolean): Promise<void> }> };
  const worker = await service.load();
  const realRun = worker.run.bind(worker);
  let release!: () => void;
  const modelGate = new Promise<void>((r) => (release = r));
  let inWorker = 0;
  worker.run = async (job, urgent) => {
    if (!urgent) {
      inWorker++;
      await modelGate;
    }
    return realRun(job, urgent);
  };

  await services.connectors.add("alice", { id: "first", kind: "maildir", config: { path: first } } as never);
  await services.connectors.add("alice", { id: "second", kind: "maildir", config: { path: second } } as never);
  await soon("both batches held", () => held.length === 2);
  const batchOf = (word: string) => held.find((h) => h.texts.some((x) => x.includes(word)))!;
  batchOf("harbour").pass();
  await soon("one batch in the worker", () => inWorker === 1);
  batchOf("lighthouse").pass();
  await soon("two jobs pending", () => services.embeddings.pending === 2);

  // Alice deletes her data: her rows and key are erased, her connectors closed one by one.
  const deleting = t.app.handle(req("/v1/delete_my_data", { method: "DELETE", headers: bearer(token) }));
  await soon("alice's key destroyed", () => services.userKeys.existingKeyFor("alice") === undefined);
  // She comes back (her next answer makes her a new key); bob's notes are indexed, taking the
  // chunk numbers her index had.
  services.userKeys.keyFor("alice");
  const bob = new EmbeddedIndex(services.db, "bob/notes", indexKeysFor(services.userKeys, "bob", "notes", true), () => [
    "Bob's first note about the pallets.",
    "Bob's second note about the pallets.",
    "Bob's third note about the pallets.",
  ]);
  const record = {
    id: "n1",
    title: "Pallets",
    content: "Bob's notes about the pallets.",
    source_url: "file:///n1",
    date: null,
    type: "file" as const,
    path: "n1",
    metadata: {},
  };
  await bob.put({ source: "n1", size: 10, mtime: 1 }, [record]);

  release();
  expect((await deleting).status).toBe(200);
  await services.embeddings.idle();

  const n = (sql: string) => services.db.query<{ n: number }, []>(sql).get()!.n;
  const written = {
    aliceVectors: n("SELECT count(*) AS n FROM connector_vec WHERE owner LIKE 'alice/%'"),
    bobMarkedEmbedded: n("SELECT count(*) AS n FROM connector_chunks WHERE owner = 'bob/notes' AND embedded = 1"),
  };
  // Was { aliceVectors: 1, bobMarkedEmbedded: 1 }: the deleted alice's "harbour" vector written
  // after her deletion (under her new key, into bob's chunk number), and bob's chunk marked
  // embedded with no vector of his: his notes are never found by meaning.
  expect(written).toEqual({ aliceVectors: 0, bobMarkedEmbedded: 0 });
});

test("attack: a user's deletion while their folder's batch waits is logged as the connector's embedding failing", async () => {
  const roots = tempDir("corpus-embed-deletion-");
  const folder = maildir(roots, "mail", "Harbour", "The harbour audit is due on Friday.");
  t = await newApp({ CORPUS_CONNECTOR_ROOTS: join(roots, "{user}") });
  const { services } = t;
  const token = await tokenFor(services, "alice", ["corpus:search", "connectors:write", "connectors:read"]);
  // Another owner's background job in the worker (held there): alice's batch waits behind it.
  const service = services.embeddings as unknown as { load(): Promise<{ run(job: unknown, urgent: boolean): Promise<void> }> };
  const worker = await service.load();
  const realRun = worker.run.bind(worker);
  let release!: () => void;
  const modelGate = new Promise<void>((r) => (release = r));
  worker.run = async (job, urgent) => {
    if (!urgent) await modelGate;
    return realRun(job, urgent);
  };
  const other = services.embeddings.embed("carol", ["an unrelated background text"], "background");
  await services.connectors.add("alice", { id: "mail", kind: "maildir", config: { path: folder } } as never);
  await soon("two jobs pending", () => services.embeddings.pending === 2);

  const deleting = t.app.handle(req("/v1/delete_my_data", { method: "DELETE", headers: bearer(token) }));
  await soon("alice's key destroyed", () => services.userKeys.existingKeyFor("alice") === undefined);
  release();
  expect((await deleting).status).toBe(200);
  await other;
  await services.embeddings.idle();

  const failures = t.logs
    .records()
    .filter((r) => r.level !== "INFO" && r.level !== "DEBUG")
    .map((r) => `${r.level} ${r.message} ${r.error ?? ""}`.trim());
  // Was ["WARNING connector embedding paused the embedding job is no longer wanted"]: the batch of a deleted owner, cancelled by the
  // service (EmbeddingCancelled), is taken for a failure; embedLoop skips only NoUserKey as "no failure".
  expect(failures).toEqual([]);
});
