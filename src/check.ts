// `corpus check`: proves on this machine that the native parts work: the data dir and its
// database, sqlite-vec (a KNN query), the embedding model (a sentence embedded), and the
// classifier of what is asked by the prototypes' vectors the build computed (D32).
import { Database } from "bun:sqlite";
import type { Config } from "./config";
import { loadMasterKey } from "./crypto/master-key";
import { cosine, loadEmbedder, MODEL_COPIES } from "./embedding/embedder";
import { MIGRATIONS } from "./migrations";
import { embeddingModel } from "./native/assets";
import { megabytes, roomForCopies } from "./native/materialize";
import { askedOf } from "./retrieval/asked";
import { loadSqliteVec, openDatabase } from "./store/database";

export interface CheckReport {
  data_dir: string;
  /** Room the model's checked copies needed in the data folder when the check began, and the room there was. */
  model_copies: { needed_bytes: number; free_bytes: number };
  sqlite_version: string;
  sqlite_vec_version: string;
  knn_nearest: number;
  embedding_dim: number;
  embedding_head: number[];
  similarity_related: number;
  similarity_unrelated: number;
  /** What ASKED_PROBE asks, read by the model (its words name no kind the tables know). */
  asked: { kind: string; by: string };
}

/** A question whose kind (an item) only the model reads. */
export const ASKED_PROBE = "Remind me what I grabbed at the garden centre.";

export async function runCheck(config: Config): Promise<CheckReport> {
  const db = openDatabase(config.CORPUS_DATA_DIR, MIGRATIONS);
  loadMasterKey({ dataDir: config.CORPUS_DATA_DIR, fromEnv: config.CORPUS_MASTER_KEY, file: config.CORPUS_MASTER_KEY_FILE });
  const versions = db.query<{ s: string; v: string }, []>("SELECT sqlite_version() AS s, vec_version() AS v").get()!;
  db.close();

  // Said before any copy is tried: a disk too small for them is the operator's to fix (D29).
  const room = roomForCopies(MODEL_COPIES, config.CORPUS_DATA_DIR);
  if (room.needed_bytes > room.free_bytes)
    throw new Error(
      `no room in the data folder ${config.CORPUS_DATA_DIR} for the embedding model's checked copies (onnxruntime and the model): they need ${megabytes(room.needed_bytes)}, ${megabytes(room.free_bytes)} free; free space there or set CORPUS_DATA_DIR to a larger disk`,
    );
  const embedder = await loadEmbedder({ dataDir: config.CORPUS_DATA_DIR });
  const [example, question, related, unrelated, probe] = await embedder.embed([
    "This is an example sentence",
    "How much did Acme pay on the last invoice?",
    "Invoice #1042 from Acme Corp: total 1,250.00 EUR, paid",
    "Team offsite agenda for Friday",
    ASKED_PROBE,
  ]);
  const asked = askedOf(ASKED_PROBE, { vector: probe!, model: embeddingModel.sha256 });

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
    model_copies: room,
    sqlite_version: versions.s,
    sqlite_vec_version: versions.v,
    knn_nearest: nearest.rowid,
    embedding_dim: example!.length,
    embedding_head: Array.from(example!.slice(0, 4), (x) => Math.round(x * 1e5) / 1e5),
    similarity_related: Math.round(cosine(question!, related!) * 1e4) / 1e4,
    similarity_unrelated: Math.round(cosine(question!, unrelated!) * 1e4) / 1e4,
    asked: { kind: asked.asks, by: asked.by },
  };
}
