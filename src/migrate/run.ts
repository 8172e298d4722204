// `corpus migrate --to postgres://…` (D33): copies an embedded data folder into an empty
// PostgreSQL, which the nodes then share. The folder is opened read-only and checked first
// (source.ts); the target gets every room's schema (PG_MIGRATIONS), then each table is copied in
// batches (steps.ts), each batch committed with its progress mark in one transaction: a copy
// killed midway (kill -9, a lost connection) is finished by running the command again, with
// nothing doubled. Then it is verified (verify.ts): per table, the rows on both sides; per
// room, a sample of sealed rows opened with the key from both sides and compared. One copy
// at a time per database (an advisory lock held while it runs).
import type postgres from "postgres";
import type { Config } from "../config";
import { existingMasterKey } from "../crypto/master-key";
import { PG_MIGRATIONS } from "../migrations";
import { openSharedDatabase } from "../store/shared";
import { MIGRATE_MESSAGES, MigrateError } from "./errors";
import { openSource } from "./source";
import { ChunkTexts, copySteps, finishSequences } from "./steps";
import { type Verified, verifyCopy } from "./verify";

/** Where the copy's progress is kept in the target: one row per table copied, and the folder's. */
export const PROGRESS_TABLE = "corpus_migrate_progress";
/** The progress row naming the folder copied (its database's creation time). */
const FOLDER_ROW = "folder";
/** The progress row written when every table is copied. */
const FINISHED_ROW = "finished";
/** The advisory lock a copy holds while it runs (any fixed number: "corpus mig"). */
const MIGRATE_LOCK = 0x636f7270_75736d69n;
/** Rows per transaction by default: small enough that a batch of sealed records stays a few MB. */
export const DEFAULT_BATCH = 500;

export interface MigrateOptions {
  dataDir: string;
  url: string;
  masterKey: { fromEnv?: string; file?: string };
  /** Rows per transaction (DEFAULT_BATCH). */
  batch?: number;
  /** Told of each table as it is copied (the CLI prints it on stderr). */
  progress?: (line: string) => void;
}

export interface MigrateReport {
  data_dir: string;
  /** Tables copied by this run (a resumed copy: what was left). */
  copied: Array<{ room: string; table: string; rows: number }>;
  /** A copy finished by an earlier run: nothing copied, verified again. */
  finished_before?: string;
  /** Chunk texts cut again from their records (stored before texts were kept). */
  texts_cut: number;
  verified: Verified;
  ok: boolean;
  seconds: number;
}

/** Tables of the target that hold rows (every corpus table but the schema's record and the copy's progress). */
async function tablesWithRows(sql: postgres.Sql): Promise<string[]> {
  const tables = await sql<{ name: string }[]>`SELECT tablename AS name FROM pg_tables
    WHERE schemaname = current_schema() AND tablename LIKE 'corpus\\_%' AND tablename NOT IN ('corpus_schema_migrations', ${PROGRESS_TABLE})
    ORDER BY tablename`;
  const held: string[] = [];
  for (const { name } of tables) if ((await sql`SELECT 1 FROM ${sql(name)} LIMIT 1`).length) held.push(name);
  return held;
}

export async function migrateToPostgres(options: MigrateOptions): Promise<MigrateReport> {
  const started = performance.now();
  const say = options.progress ?? (() => {});
  const limit = options.batch ?? DEFAULT_BATCH;
  const key = existingMasterKey({ ...options.masterKey, dataDir: options.dataDir });
  if (!key) throw new MigrateError(MIGRATE_MESSAGES.noKey(options.dataDir));
  const source = openSource(options.dataDir, key);
  let target: postgres.Sql | undefined;
  let lock: postgres.ReservedSql | undefined;
  try {
    target = await openSharedDatabase(options.url, PG_MIGRATIONS, 4);
    const sql = target;
    // Held on a connection of its own for the whole run: a second copy into the same database is refused; a killed one's is freed with its connection.
    lock = await sql.reserve();
    const [{ locked }] = (await lock`SELECT pg_try_advisory_lock(${MIGRATE_LOCK.toString()}::bigint) AS locked`) as unknown as [
      { locked: boolean },
    ];
    if (!locked) throw new MigrateError(MIGRATE_MESSAGES.busy());
    await sql.unsafe(`CREATE TABLE IF NOT EXISTS ${PROGRESS_TABLE} (
      step text PRIMARY KEY,
      mark text,
      rows bigint NOT NULL DEFAULT 0,
      done boolean NOT NULL DEFAULT false
    )`);
    const progress = new Map(
      (
        await sql<
          { step: string; mark: string | null; rows: string; done: boolean }[]
        >`SELECT step, mark, rows, done FROM ${sql(PROGRESS_TABLE)}`
      ).map((r) => [r.step, r]),
    );
    const folder = progress.get(FOLDER_ROW);
    if (!folder) {
      const held = await tablesWithRows(sql);
      if (held.length) throw new MigrateError(MIGRATE_MESSAGES.notEmpty(held));
      await sql`INSERT INTO ${sql(PROGRESS_TABLE)} (step, mark, done) VALUES (${FOLDER_ROW}, ${source.identity}, true)`;
    } else if (folder.mark !== source.identity) throw new MigrateError(MIGRATE_MESSAGES.anotherFolder());
    const finished = progress.get(FINISHED_ROW);
    const cut = new ChunkTexts(source.keys);
    const steps = await copySteps(source.db, sql, cut);
    const copied: MigrateReport["copied"] = [];
    if (!finished) {
      for (const step of steps) {
        const at = progress.get(step.name);
        if (at?.done) continue;
        let mark = at?.mark ?? null;
        let rows = 0;
        for (;;) {
          const done = await sql.begin(async (tx) => {
            const next = await step.batch(tx, mark, limit);
            // The mark moves with the rows, in their transaction: a batch is copied once, or not at all.
            await tx`INSERT INTO ${tx(PROGRESS_TABLE)} (step, mark, rows, done) VALUES (${step.name}, ${next?.mark ?? mark}, ${next?.rows ?? 0}, ${!next})
              ON CONFLICT (step) DO UPDATE SET mark = EXCLUDED.mark, rows = ${tx(PROGRESS_TABLE)}.rows + EXCLUDED.rows, done = EXCLUDED.done`;
            if (next) {
              mark = next.mark;
              rows += next.rows;
            }
            return !next;
          });
          if (done) break;
        }
        copied.push({ room: step.room, table: step.name, rows });
        say(`${step.room}: ${step.name}: ${rows} rows copied`);
      }
      // The numbering moved past the ids copied; the marks (terms, ids) no longer needed are cleared.
      await sql.begin(async (tx) => {
        await finishSequences(tx);
        await tx`UPDATE ${tx(PROGRESS_TABLE)} SET mark = NULL WHERE step <> ${FOLDER_ROW}`;
        await tx`INSERT INTO ${tx(PROGRESS_TABLE)} (step, mark, done) VALUES (${FINISHED_ROW}, ${new Date().toISOString()}, true)`;
      });
    } else say(`the copy of this folder was finished at ${finished.mark}: verified again`);
    const verified = await verifyCopy(source, sql, steps, key);
    return {
      data_dir: options.dataDir,
      copied,
      ...(finished ? { finished_before: finished.mark ?? "" } : {}),
      texts_cut: cut.cut,
      verified,
      ok: verified.ok,
      seconds: Math.round(performance.now() - started) / 1000,
    };
  } finally {
    lock?.release();
    await target?.end();
    source.db.close();
  }
}

/** The command as the CLI runs it: the folder and its key from the configuration the nodes read. */
export function migrateCommand(options: Record<string, string>, config: Config, progress?: (line: string) => void): Promise<MigrateReport> {
  const batch = options.batch === undefined ? undefined : Number(options.batch);
  if (batch !== undefined && !(Number.isInteger(batch) && batch >= 1 && batch <= 10_000))
    throw new MigrateError("--batch takes a whole number of rows from 1 to 10000");
  if (!/^postgres(ql)?:\/\//.test(options.to ?? ""))
    throw new MigrateError("--to takes a PostgreSQL URL: postgres://user:password@host:5432/database");
  return migrateToPostgres({
    dataDir: config.CORPUS_DATA_DIR,
    url: options.to!,
    masterKey: { fromEnv: config.CORPUS_MASTER_KEY, file: config.CORPUS_MASTER_KEY_FILE },
    ...(batch !== undefined ? { batch } : {}),
    ...(progress ? { progress } : {}),
  });
}
