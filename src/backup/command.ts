// `corpus backup`, `corpus verify` and `corpus restore` (D30) as the CLI runs them: the data folder and the master
// key come from the same configuration the server reads.
import type { Config } from "../config";
import { MIGRATIONS } from "../migrations";
import { restoreBackup } from "./restore";
import { createBackup } from "./snapshot";
import { verifyBackup } from "./verify";

export async function backupCommand(command: "backup" | "verify" | "restore" | string, options: Record<string, string>, config: Config) {
  if (command === "backup") {
    const { out, bytes, seconds, manifest } = createBackup({
      dataDir: config.CORPUS_DATA_DIR,
      out: options.out!,
      force: options.force === "true",
    });
    return {
      out,
      bytes,
      seconds: round(seconds),
      created_at: manifest.created_at,
      corpus_version: manifest.corpus_version,
      migrations: manifest.schema.length,
      files: manifest.files,
    };
  }
  if (command === "verify")
    return verifyBackup(
      options.from!,
      MIGRATIONS.map((m) => m.id),
    );
  const report = restoreBackup({
    from: options.from!,
    dataDir: config.CORPUS_DATA_DIR,
    masterKey: { fromEnv: config.CORPUS_MASTER_KEY, file: config.CORPUS_MASTER_KEY_FILE },
    knownMigrations: MIGRATIONS.map((m) => m.id),
  });
  return { ...report, seconds: round(report.seconds) };
}

const round = (seconds: number) => Math.round(seconds * 1000) / 1000;
