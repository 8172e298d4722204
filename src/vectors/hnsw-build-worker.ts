// The index builder (a Bun Worker, started by partition-index.ts for each snapshot): reads one
// partition's keyed vectors on a connection of its own and builds their HNSW index, off the
// thread that serves requests (D31). It holds no key: the vectors are read as stored, rotated.
import { Database } from "bun:sqlite";
import { renameSync } from "node:fs";
import { EMBEDDING_DIM } from "../embedding/embedder";
import { loadSqliteVec } from "../store/database";
import { EmbeddedHnsw } from "./hnsw";
import type { BuildAsked, BuildDone } from "./hnsw-build-protocol";

declare const self: Worker;

/** Vectors added to the index at a time (their ids and a flat copy: ~7.7 MB). */
const BATCH = 5000;

self.onmessage = (event: MessageEvent<BuildAsked>) => {
  const m = event.data;
  let reply: BuildDone;
  try {
    const db = new Database(m.file, { readwrite: true, create: false, strict: true });
    try {
      db.exec("PRAGMA query_only = ON");
      db.exec("PRAGMA busy_timeout = 5000");
      loadSqliteVec(db, m.dataDir);
      const { table, id, partition } = m.table;
      // One read transaction: the snapshot is of one moment (the changes after it are kept beside it).
      const index = EmbeddedHnsw.create();
      const vectors = db
        .transaction(() => {
          let n = 0;
          let ids: number[] = [];
          let flat = new Float32Array(BATCH * EMBEDDING_DIM);
          const add = () => {
            if (ids.length) index.add(ids, flat.subarray(0, ids.length * EMBEDDING_DIM), 1);
            n += ids.length;
            ids = [];
            flat = new Float32Array(BATCH * EMBEDDING_DIM);
          };
          for (const r of db
            .query<{ id: number; embedding: Uint8Array }, [string]>(`SELECT ${id} AS id, embedding FROM ${table} WHERE ${partition} = ?`)
            .iterate(m.partition)) {
            const at = r.embedding.byteOffset;
            flat.set(new Float32Array(r.embedding.buffer.slice(at, at + EMBEDDING_DIM * 4)), ids.length * EMBEDDING_DIM);
            ids.push(r.id);
            if (ids.length === BATCH) add();
          }
          add();
          return n;
        })
        .deferred();
      index.save(`${m.out}.part`);
      renameSync(`${m.out}.part`, m.out);
      reply = { vectors };
    } finally {
      db.close();
    }
  } catch (error) {
    reply = { error: error instanceof Error ? error.message : String(error) };
  }
  self.postMessage(reply);
};
