// A node killed with SIGKILL in the middle of its work (D33, D29, issue 37): node A indexes a
// user's folder, owes vectors of archived answers, and holds webhook deliveries its receiver has
// refused so far; A dies (kill -9, no shutdown). Node B, running all along, finishes all of it
// once A's leases expire: every file indexed and embedded, every archived chunk embedded, every
// user.deleted event delivered, and none of them twice (README "Webhooks": an event is sent twice
// only when its delivery was in flight as its node stopped; here none was, the receiver refusing
// every attempt until A was dead). A real receiver counts what it accepted.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { call, type TwoNodes, twoNodes } from "../support/two-nodes";
import { until } from "../support/wait";

setDefaultTimeout(420_000);

/** Files in the folder A indexes: enough that it is still at work when it is killed. */
const FILES = 200;
/** Users deleted on A, each a user.deleted delivery to the operator's webhook. */
const DELETED = ["dora", "emil", "fay"];
/** How long B may take once A is dead: the index lease (60 s) and the deliveries' (30 s) expire, then the work. */
const TAKEOVER_MS = 240_000;

/** The operator's webhook receiver: refuses every delivery until told to accept, then counts each event by its id. */
let accepting = false;
const accepted = new Map<string, number>();
let refused = 0;
const receiver = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(request) {
    // Decided as the request arrives: one A sent before it died is refused, however late it is read.
    const accepts = accepting;
    const event = (await request.json()) as { id: string; type: string };
    if (!accepts) {
      refused++;
      return new Response("not yet", { status: 503 });
    }
    accepted.set(event.id, (accepted.get(event.id) ?? 0) + 1);
    return new Response(null, { status: 204 });
  },
});

let nodes: TwoNodes;
beforeAll(async () => {
  nodes = await twoNodes({
    CORPUS_WEBHOOK_URL: `http://127.0.0.1:${receiver.port}/hook`,
    CORPUS_WEBHOOK_SECRET: "kill-node-test-secret-0123456789",
    CORPUS_WEBHOOK_ALLOW_PRIVATE: "true",
  });
});
afterAll(async () => {
  await nodes?.close();
  receiver.stop(true);
});

/** One number of the shared database, read as the operator would (the admin's connection). */
async function count(query: string): Promise<number> {
  const [row] = await nodes.db.admin.unsafe<{ n: string }[]>(query);
  return Number(row!.n);
}
const owedArchiveVectors = () => count("SELECT count(*) AS n FROM corpus_archive_chunks WHERE NOT embedded");
const pendingDeliveries = () => count("SELECT count(*) AS n FROM corpus_webhook_outbox WHERE state = 'pending'");

interface Listed {
  id: string;
  status: string;
  records?: number;
}
async function notesOn(node: TwoNodes["a"], token: string): Promise<Listed | undefined> {
  const r = await call(node, token, "GET", "/v1/connectors");
  expect(r.status).toBe(200);
  return ((await r.json()) as { connectors: Listed[] }).connectors.find((c) => c.id === "notes");
}

test("kill -9 of node A while it indexes, owes archive vectors and webhook deliveries: B finishes all of it, nothing lost, nothing sent twice", async () => {
  const token = await nodes.token("kim");
  const doomed = await Promise.all(DELETED.map((user) => nodes.token(user)));
  const docs = join(nodes.folderOf("kim"), "notes");
  mkdirSync(docs, { recursive: true });
  const word = (i: number) => `quorvex${i.toString(36)}ant`;
  for (let i = 0; i < FILES; i++)
    writeFileSync(
      join(docs, `note-${String(i).padStart(4, "0")}.txt`),
      `Note ${i}: the ${word(i)} shipment of copper cable leaves the Rotterdam warehouse on Tuesday ${i % 28} at dawn.\n`,
    );
  expect((await call(nodes.a, token, "POST", "/v1/connectors", { id: "notes", kind: "files", config: { path: docs } })).status).toBe(200);

  // A at work: some notes read, not all of them embedded.
  await until("A to have read some notes", async () => {
    const notes = await notesOn(nodes.a, token);
    return notes && (notes.records ?? 0) > 0 ? true : undefined;
  });
  // Users deleted on A: their user.deleted events wait in the outbox, the receiver refusing them.
  for (const t of doomed) expect((await call(nodes.a, t, "DELETE", "/v1/delete_my_data")).status).toBe(200);
  await until("A to have tried a delivery", () => (refused > 0 ? true : undefined));
  // Questions answered by A while it embeds, about the last notes (embedded last): their chunks
  // archived without vectors, owed; A dies right after the last answer, before it has made them.
  for (const i of [FILES - 1, FILES - 2, FILES - 3]) {
    const r = await call(nodes.a, token, "POST", "/v1/query", { query: `when does the ${word(i)} shipment leave?`, max_results: 50 });
    expect(r.status).toBe(200);
  }
  await nodes.a.kill9();
  accepting = true;
  const atKill = {
    notes: await notesOn(nodes.b, token),
    archived: await count("SELECT count(*) AS n FROM corpus_archive_chunks"),
    archive: await owedArchiveVectors(),
    deliveries: await pendingDeliveries(),
  };
  // What A left undone, so that B has something to finish.
  expect(atKill.notes?.status).not.toBe("ok");
  // Archived chunks' vectors are owed at the kill in most runs (A makes them moments after the
  // answer, and dies right after it); when any are, B must make them: none is left below.
  expect(atKill.archived).toBeGreaterThan(0);
  expect(atKill.deliveries).toBe(DELETED.length);

  // B finishes it all by itself: nobody asks B anything but how far it got.
  let lastSeen: Record<string, unknown> = {};
  const done = await until(
    "B to finish A's work",
    async () => {
      const notes = await notesOn(nodes.b, token);
      const now = { notes, archive: await owedArchiveVectors(), deliveries: await pendingDeliveries(), accepted: accepted.size };
      lastSeen = now;
      return notes?.status === "ok" && now.archive === 0 && now.deliveries === 0 && now.accepted === DELETED.length ? now : undefined;
    },
    TAKEOVER_MS,
  ).catch(() => lastSeen);
  expect(done).toMatchObject({ archive: 0, deliveries: 0, accepted: DELETED.length });
  expect(done.notes).toMatchObject({ status: "ok", records: FILES });
  // Each event delivered once: B's claims are its own, and none of A's was in flight when it died.
  expect([...accepted.values()]).toEqual(DELETED.map(() => 1));
  // Every note is searchable from B (the first one, not asked about before).
  const found = await call(nodes.b, token, "POST", "/v1/query", { query: `when does the ${word(0)} shipment leave?`, max_results: 3 });
  expect(JSON.stringify(await found.json())).toContain(word(0));
  expect(nodes.b.errors()).toEqual([]);
  console.error(`at the kill: ${JSON.stringify(atKill)}`);
});
