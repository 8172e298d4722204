// The check of a copy (`corpus migrate`, D33): every table's rows counted on both sides, and per
// room a sample of its sealed rows opened with the master key, through the key rows of each side
// (the folder's, PostgreSQL's), and compared: the same texts, secrets, configs and records. A
// keyed vector is compared as it is (it is never opened). Only in memory: nothing opened is written.
import type { Database } from "bun:sqlite";
import type postgres from "postgres";
import { chunkAad, documentAad, questionAad } from "../archive/store";
import { indexKeysFor } from "../connectors/local-index/context";
import { chunkRow } from "../connectors/local-index/documents";
import { sealedAt } from "../connectors/local-index/skipped";
import { INDEX_TABLES } from "../connectors/local-index/store-postgres";
import { ConnectorRows, SqliteConnectorRecords } from "../connectors/rows";
import { PostgresConnectorRecords } from "../connectors/rows-postgres";
import { Conversations, SqliteConversationRecords } from "../conversations/store";
import { PostgresConversationRecords } from "../conversations/store-postgres";
import { UserKeys } from "../crypto/user-keys";
import { PostgresUserKeyRecords } from "../crypto/user-keys-postgres";
import { VECTORS_TABLE } from "../vectors/postgres";
import { splitPartition } from "../vectors/sqlite";
import { WebhookSeals } from "../webhooks/store";
import { OUTBOX_TABLE, WEBHOOKS_TABLE } from "../webhooks/store-postgres";
import type { OpenedSource } from "./source";
import { DOCS_OF_CHUNKS, INDEX_ROOM, type Step, VISIBLE, VISIBLE_DOCS } from "./steps";

/** Rows of each room opened on both sides and compared. */
export const SAMPLE_ROWS = 20;

export interface Verified {
  tables: Array<{ room: string; table: string; embedded: number; postgres: number; equal: boolean }>;
  /** Per room: how many sealed values were opened on both sides, and those that differ (by row). */
  samples: Array<{ room: string; opened: number; differ: string[] }>;
  ok: boolean;
}

/** One sealed value (or a keyed vector) of a row, as each side gives it: opened, or an error's message. */
type Pair = { row: string; embedded: () => unknown; postgres: () => Promise<unknown> };

const attempt = async (f: () => unknown): Promise<unknown> => {
  try {
    return await f();
  } catch (error) {
    return `cannot open: ${(error as Error).message}`;
  }
};

const sample = <T>(db: Database, sql: string) => db.query<T, [number]>(`${sql} ORDER BY random() LIMIT ?`).all(SAMPLE_ROWS);

export async function verifyCopy(source: OpenedSource, sql: postgres.Sql, steps: Step[], masterKey: Buffer): Promise<Verified> {
  const db = source.db;
  const tables: Verified["tables"] = [];
  for (const step of steps) {
    const { embedded, postgres } = await step.count(db, sql);
    tables.push({ room: step.room, table: step.name, embedded, postgres, equal: embedded === postgres });
  }
  const here = source.keys;
  const there = new UserKeys(new PostgresUserKeyRecords(sql), masterKey);
  const ready = new Set<string>();
  /** The PostgreSQL side's keys of `user`, made present on this node from its rows (as a node does at a request). */
  const theirs = async (user: string) => {
    if (!ready.has(user)) await there.ready(user);
    ready.add(user);
    return there;
  };
  const rooms: Record<string, Pair[]> = {
    "users' data keys": sample<{ user_id: string }>(db, "SELECT user_id FROM crypto_user_keys").map(({ user_id: u }) => ({
      row: u,
      embedded: () => here.keyFor(u, false).toString("hex"),
      postgres: async () => (await theirs(u)).keyFor(u, false).toString("hex"),
    })),
    connectors: sample<{ user_id: string }>(db, "SELECT DISTINCT user_id FROM connectors").map(({ user_id: u }) => ({
      row: u,
      embedded: () => new ConnectorRows(new SqliteConnectorRecords(db), here).of(u),
      postgres: async () => new ConnectorRows(new PostgresConnectorRecords(sql), await theirs(u)).of(u),
    })),
    conversations: sample<{ id: string; user_id: string }>(db, "SELECT id, user_id FROM conversations").map((c) => ({
      row: c.id,
      embedded: () => new Conversations(new SqliteConversationRecords(db), here).turns(c.user_id, c.id),
      postgres: async () => new Conversations(new PostgresConversationRecords(sql), await theirs(c.user_id)).turns(c.user_id, c.id),
    })),
    "the archive": archivePairs(db, sql, here, theirs),
    "webhooks and their deliveries": webhookPairs(db, sql, here, theirs, masterKey),
    [INDEX_ROOM]: indexPairs(db, sql, here, theirs),
  };
  const samples: Verified["samples"] = [];
  for (const [room, pairs] of Object.entries(rooms)) {
    const differ: string[] = [];
    for (const p of pairs) {
      const [a, b] = [await attempt(p.embedded), await attempt(p.postgres)];
      // Opened on both sides and equal (an error on either side is a difference).
      if (JSON.stringify(a) !== JSON.stringify(b) || (typeof a === "string" && a.startsWith("cannot open"))) differ.push(p.row);
    }
    samples.push({ room, opened: pairs.length, differ });
  }
  return { tables, samples, ok: tables.every((t) => t.equal) && samples.every((s) => s.differ.length === 0) };
}

type TheirKeys = (user: string) => Promise<UserKeys>;

/** An archived chunk, question and document opened as the archive opens them (store.ts: bound to their query and ids). */
function archivePairs(db: Database, sql: postgres.Sql, here: UserKeys, theirs: TheirKeys): Pair[] {
  const chunks = sample<{ id: number; user_id: string; query_id: string; chunk_id: string; body: Uint8Array }>(
    db,
    "SELECT id, user_id, query_id, chunk_id, body FROM archive_chunks",
  );
  const documents = sample<{ id: number; user_id: string; doc_id: string; body: Uint8Array }>(
    db,
    "SELECT id, user_id, doc_id, body FROM archive_documents",
  );
  const questions = sample<{ query_id: string; user_id: string; question: Uint8Array }>(
    db,
    "SELECT query_id, user_id, question FROM archive_queries",
  );
  return [
    ...chunks.map((c) => ({
      row: `chunk ${c.id}`,
      embedded: () => openArchived(here, c.user_id, c.body, chunkAad(c.query_id, c.chunk_id), c.query_id),
      postgres: async () => {
        const [r] = await sql<{ body: Uint8Array; query_id: string; chunk_id: string }[]>`
          SELECT body, query_id, chunk_id FROM corpus_archive_chunks WHERE id = ${c.id} AND user_id = ${c.user_id}`;
        return openArchived(await theirs(c.user_id), c.user_id, r!.body, chunkAad(r!.query_id, r!.chunk_id), r!.query_id);
      },
    })),
    ...documents.map((d) => ({
      row: `document ${d.id}`,
      embedded: () => here.openFor(d.user_id, d.body, documentAad(d.doc_id)).toString("utf8"),
      postgres: async () => {
        const [r] = await sql<{ body: Uint8Array; doc_id: string }[]>`
          SELECT body, doc_id FROM corpus_archive_documents WHERE id = ${d.id} AND user_id = ${d.user_id}`;
        return (await theirs(d.user_id)).openFor(d.user_id, r!.body, documentAad(r!.doc_id)).toString("utf8");
      },
    })),
    ...questions.map((q) => ({
      row: `question ${q.query_id}`,
      embedded: () => openArchived(here, q.user_id, q.question, questionAad(q.query_id), q.query_id),
      postgres: async () => {
        const [r] = await sql<{ question: Uint8Array }[]>`
          SELECT question FROM corpus_archive_queries WHERE query_id = ${q.query_id} AND user_id = ${q.user_id}`;
        return openArchived(await theirs(q.user_id), q.user_id, r!.question, questionAad(q.query_id), q.query_id);
      },
    })),
  ];
}

/** An archived value, also in the form the first version sealed (bound to its query only), as the archive opens it. */
function openArchived(keys: UserKeys, user: string, sealed: Uint8Array, aad: string, queryId: string): string {
  try {
    return keys.openFor(user, sealed, aad).toString("utf8");
  } catch {
    return keys.openFor(user, sealed, `archive/${queryId}`).toString("utf8");
  }
}

/** A webhook's secret (the user's key) and an outbox delivery (the outbox key, from the master key), opened. */
function webhookPairs(db: Database, sql: postgres.Sql, here: UserKeys, theirs: TheirKeys, masterKey: Buffer): Pair[] {
  const hooks = sample<{ id: string; user_id: string; url: string; events: string; secret: Uint8Array }>(
    db,
    "SELECT id, user_id, url, events, secret FROM webhooks",
  );
  const outbox = sample<{ id: number; delivery: Uint8Array }>(db, "SELECT id, delivery FROM webhook_outbox");
  const now = () => Date.now();
  return [
    ...hooks.map((h) => ({
      row: h.id,
      embedded: () => new WebhookSeals(here, masterKey, now).targets(h.user_id, "user.deleted", [h]),
      postgres: async () => {
        const rows = await sql<{ id: string; url: string; events: string; secret: Uint8Array }[]>`
          SELECT id, url, events, secret FROM ${sql(WEBHOOKS_TABLE)} WHERE id = ${h.id} AND user_id = ${h.user_id}`;
        return new WebhookSeals(await theirs(h.user_id), masterKey, now).targets(h.user_id, "user.deleted", rows);
      },
    })),
    ...outbox.map((o) => ({
      row: `delivery ${o.id}`,
      embedded: () => new WebhookSeals(here, masterKey, now).delivery(o.delivery),
      postgres: async () => {
        const [r] = await sql<{ delivery: Uint8Array }[]>`SELECT delivery FROM ${sql(OUTBOX_TABLE)} WHERE id = ${o.id}`;
        return new WebhookSeals(here, masterKey, now).delivery(r!.delivery);
      },
    })),
  ];
}

const I = INDEX_TABLES;

/** A record and a chunk's text opened with their index's keys (bound to their numbers), a skipped source's note, and a keyed vector as stored. */
function indexPairs(db: Database, sql: postgres.Sql, here: UserKeys, theirs: TheirKeys): Pair[] {
  // Of the records a question sees (hidden ones are not copied: steps.ts VISIBLE).
  const records = sample<{ doc: number; owner: string; record: Uint8Array }>(
    db,
    `SELECT d.doc, d.owner, d.record FROM ${VISIBLE_DOCS} WHERE ${VISIBLE}`,
  );
  const chunks = sample<{ chunk: number; doc: number; ord: number; owner: string; text: Uint8Array }>(
    db,
    `SELECT c.chunk, c.doc, c.ord, c.owner, c.text FROM connector_chunks c JOIN ${DOCS_OF_CHUNKS} WHERE c.text IS NOT NULL AND ${VISIBLE}`,
  );
  const skipped = sample<{ skip: number; owner: string; source: string; note: Uint8Array }>(
    db,
    "SELECT skip, owner, source, note FROM connector_skipped",
  );
  const vectors = sample<{ chunk: number }>(
    db,
    `SELECT c.chunk FROM connector_chunks c JOIN ${DOCS_OF_CHUNKS} WHERE c.embedded = 1 AND ${VISIBLE}`,
  );
  const keysOf = (keys: UserKeys, partition: string) => {
    const { owner, connector } = splitPartition(partition);
    return indexKeysFor(keys, owner, connector, false);
  };
  const owner = (partition: string) => splitPartition(partition).owner;
  return [
    ...records.map((r) => ({
      row: `record ${r.doc}`,
      embedded: () => keysOf(here, r.owner).open(r.record, `doc/${r.doc}`),
      postgres: async () => {
        const [p] = await sql<{ record: Uint8Array }[]>`SELECT record FROM ${sql(I.docs)} WHERE doc = ${r.doc}`;
        return keysOf(await theirs(owner(r.owner)), r.owner).open(p!.record, `doc/${r.doc}`);
      },
    })),
    ...chunks.map((c) => ({
      row: `chunk ${c.chunk}`,
      embedded: () => keysOf(here, c.owner).open(c.text, chunkRow(c.doc, c.ord)),
      postgres: async () => {
        const [p] = await sql<
          { text: Uint8Array; doc: string; ord: number }[]
        >`SELECT text, doc, ord FROM ${sql(I.chunks)} WHERE chunk = ${c.chunk}`;
        return keysOf(await theirs(owner(c.owner)), c.owner).open(p!.text, chunkRow(Number(p!.doc), p!.ord));
      },
    })),
    ...skipped.map((s) => ({
      row: `skipped ${s.skip}`,
      embedded: () => keysOf(here, s.owner).open(s.note, sealedAt(s.source)),
      postgres: async () => {
        const [p] = await sql<{ note: Uint8Array; source: string }[]>`SELECT note, source FROM ${sql(I.skipped)} WHERE skip = ${s.skip}`;
        return keysOf(await theirs(owner(s.owner)), s.owner).open(p!.note, sealedAt(p!.source));
      },
    })),
    ...vectors.map((v) => ({
      row: `vector ${v.chunk}`,
      embedded: () => {
        const e = db.query<{ e: Uint8Array }, [number]>("SELECT embedding AS e FROM connector_vec WHERE chunk_id = ?").get(v.chunk)?.e;
        return e ? Array.from(new Float32Array(e.slice().buffer)) : "no vector";
      },
      postgres: async () => {
        const [p] = await sql<{ e: string }[]>`SELECT embedding::text AS e FROM ${sql(VECTORS_TABLE)} WHERE id = ${v.chunk}`;
        return (JSON.parse(p!.e) as number[]).map((x) => Math.fround(x));
      },
    })),
  ];
}
