// Backups started from the console (D30, D35): `corpus backup` itself, run as a child process
// (the executable, or the CLI's source under Bun), so that the snapshot's VACUUM INTO and the
// file's hashing never hold the thread that serves requests. One at a time; each into
// `backups/` of the data folder (mode 0700), named by its start time; listed newest first.
import { mkdirSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "../log";
import { isEmbedded } from "../native/materialize";
import type { DiskSpace } from "../store/disk-space";

export const BACKUP_FOLDER = "backups";
const BACKUP_NAME = /^corpus-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}Z\.backup$/;
/** What of a failed backup's standard error the page and log keep (its first line says why). */
const MESSAGE_CHARS = 500;

export interface BackupFile {
  name: string;
  bytes: number;
  at: number;
}

export type BackupRun = { name: string; startedAt: number } & (
  | { state: "running" }
  | { state: "done" }
  | { state: "failed"; message: string }
);

/** How to run `corpus`: the executable itself, or Bun with the CLI's source. */
export function corpusCommand(): string[] {
  return isEmbedded(import.meta.path) ? [process.execPath] : [process.execPath, join(import.meta.dir, "../cli.ts")];
}

export class ConsoleBackups {
  private current?: BackupRun;
  readonly folder: string;

  constructor(
    private readonly dataDir: string,
    private readonly disk: DiskSpace,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
    private readonly command: () => string[] = corpusCommand,
  ) {
    this.folder = join(dataDir, BACKUP_FOLDER);
  }

  /** The backup running now, or the last one started since the server did. */
  last(): BackupRun | undefined {
    return this.current;
  }

  /** Starts a backup; answers why not when one is running or the disk is nearly full (D29). */
  start(operator: string): { started: string } | { refused: string } {
    if (this.current?.state === "running") return { refused: `a backup is running already (${this.current.name})` };
    if (this.disk.low()) return { refused: "the data folder's disk is nearly full (below CORPUS_MIN_FREE_BYTES): free space first" };
    mkdirSync(this.folder, { recursive: true, mode: 0o700 });
    const name = `corpus-${new Date(this.now()).toISOString().slice(0, 19).replaceAll(":", "-")}Z.backup`;
    const run: BackupRun = { name, startedAt: Math.floor(this.now() / 1000), state: "running" };
    this.current = run;
    const child = Bun.spawn([...this.command(), "backup", "--data-dir", this.dataDir, "--out", join(this.folder, name)], {
      stdin: "ignore",
      stdout: "ignore",
      stderr: "pipe",
    });
    this.log.info("console: backup started", { operator, backup: name });
    void (async () => {
      const errors = await new Response(child.stderr).text().catch(() => "");
      const code = await child.exited;
      if (code === 0) {
        Object.assign(run, { state: "done" });
        this.log.info("console: backup written", { backup: name });
      } else {
        const message = (errors.trim().split("\n")[0] ?? "").replace(/^corpus: /, "").slice(0, MESSAGE_CHARS) || `exit code ${code}`;
        Object.assign(run, { state: "failed", message });
        this.log.warning("console: backup failed", { backup: name, reason: message });
      }
    })();
    return { started: name };
  }

  /** The path of a finished backup named `name`, or undefined: only a name of the folder's own pattern, never a path. */
  pathOf(name: string): string | undefined {
    if (!BACKUP_NAME.test(name)) return undefined;
    const path = join(this.folder, name);
    try {
      return statSync(path).isFile() ? path : undefined;
    } catch {
      return undefined;
    }
  }

  /** The finished backups in the folder, newest first (a partial file is hidden: it starts with a dot). */
  list(): BackupFile[] {
    let names: string[];
    try {
      names = readdirSync(this.folder);
    } catch {
      return [];
    }
    return names
      .filter((n) => BACKUP_NAME.test(n))
      .map((name) => {
        const s = statSync(join(this.folder, name));
        return { name, bytes: s.size, at: Math.floor(s.mtimeMs / 1000) };
      })
      .sort((a, b) => (a.name < b.name ? 1 : -1));
  }
}
