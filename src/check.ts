// `corpus check`: proves on this machine that the native parts work: the data dir and its
// database, sqlite-vec (a KNN query), and the embedding model (a sentence embedded).
import { Database } from "bun:sqlite";
import type { Config } from "./config";
import { loadMasterKey } from "./crypto/master-key";
import { cosine, loadEmbedder } from "./embedding/embedder";
import { MIGRATIONS } from "./migrations";
import { loadSqliteVec, openDatabase } from "./store/database";

export interface CheckReport {
  data_dir: string;
  sqlite_version: string;
  sqlite_vec_version: string;
  knn_nearest: number;
  embedding_dim: number;
  embedding_head: number[];
  similarity_related: number;
  similarity_unrelated: number;
}

export async function runCheck(config: Config): Promise<CheckReport> {
  const db = openDatabase(config.CORPUS_DATA_DIR, MIGRATIONS);
  loadMasterKey({ dataDir: config.CORPUS_DATA_DIR, fromEnv: config.CORPUS_MASTER_KEY, file: config.CORPUS_MASTER_KEY_FILE });
  const versions = db.query<{ s: string; v: string }, []>("SELECT sqlite_version() AS s, vec_version() AS v").get()!;
  db.close();

  const embedder = await loadEmbedder({ dataDir: config.CORPUS_DATA_DIR });
  const [example, question, related, unrelated] = await embedder.embed([
    "This is an example sentence",
    "How much did Acme pay on the last invoice?",
    "Invoice #1042 from Acme Corp: total 1,250.00 EUR, paid",
    "Team offsite agenda for Friday",
  ]);

  // A vec0 KNN over the three documents must find the related one first.
  const mem = new Database(":memory:");
  loadSqliteVec(mem, config.CORPUS_DATA_DIR);
  mem.exec(`CREATE VIRTUAL TABLE v USING vec0(embedding float[${embedder.dim}])`);
  const insert = mem.prepare("INSERT INTO v (rowid, embedding) VALUES (?, ?)");
  for (const [i, vec] of [example!, related!, unrelated!].entries()) insert.run(i + 1, vec);
  const nearest = mem.query<{ rowid: number }, [Float32Array]>("SELECT rowid FROM v WHERE embedding MATCH ? AND k = 1").get(question!)!;
  mem.close();

  return {
    data_dir: config.CORPUS_DATA_DIR,
    sqlite_version: versions.s,
    sqlite_vec_version: versions.v,
    knn_nearest: nearest.rowid,
    embedding_dim: example!.length,
    embedding_head: Array.from(example!.slice(0, 4), (x) => Math.round(x * 1e5) / 1e5),
    similarity_related: Math.round(cosine(question!, related!) * 1e4) / 1e4,
    similarity_unrelated: Math.round(cosine(question!, unrelated!) * 1e4) / 1e4,
  };
}
