// Backups started from the console (D30, D35): `corpus backup` itself, run as a child process
// (the executable, or the CLI's source under Bun), so that the snapshot's VACUUM INTO and the
// file's hashing never hold the thread that serves requests. One at a time; each into
// `backups/` of the data folder (mode 0700), named by its start time; listed newest first.
// Kept within bounds: once a new backup passes `corpus verify` (another child), the oldest
// beyond CORPUS_BACKUP_KEEP, and those older than CORPUS_BACKUP_KEEP_DAYS, are removed; never
// the new one, so the folder always holds a backup that verified. A backup that does not verify
// is removed and nothing else is.
import { lstatSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "../log";
import { isEmbedded } from "../native/materialize";
import type { DiskSpace } from "../store/disk-space";

export const BACKUP_FOLDER = "backups";
const BACKUP_NAME = /^corpus-(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})Z\.backup$/;
/** What `corpus backup` leaves when it is killed part-way (snapshot.ts): `.FILE.partial-…` and SQLite's journal beside it. */
const PARTIAL_NAME = /^\.corpus-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}Z\.backup\.partial-[0-9a-f]{12}(-journal)?$/;
/** What of a failed backup's standard error the page and log keep (its first line says why). */
const MESSAGE_CHARS = 500;
const DAY_MS = 24 * 60 * 60 * 1000;

export interface BackupFile {
  name: string;
  bytes: number;
  at: number;
}

export type BackupRun = { name: string; startedAt: number } & (
  | { state: "running" }
  | { state: "verifying" }
  | { state: "done"; removed: string[] }
  | { state: "failed"; message: string }
);

/** How many backups the console keeps, and for how long (0 days: no bound by age). */
export interface BackupBounds {
  keep: number;
  keepDays: number;
}

/** How to run `corpus`: the executable itself, or Bun with the CLI's source. */
export function corpusCommand(): string[] {
  return isEmbedded(import.meta.path) ? [process.execPath] : [process.execPath, join(import.meta.dir, "../cli.ts")];
}

/** When a backup of the console's name was started (its name says, in UTC), or undefined for another name. */
export function startedAtOf(name: string): number | undefined {
  const m = BACKUP_NAME.exec(name);
  return m ? Date.parse(`${m[1]}T${m[2]}:${m[3]}:${m[4]}Z`) : undefined;
}

/**
 * Which of `names` (the folder's backups) go once `verified` has passed verification: the newest
 * first, `verified` always kept, then each other while fewer than `keep` are kept and, with
 * `keepDays`, not older than that at `now`.
 */
export function backupsToRemove(names: string[], verified: string, bounds: BackupBounds, now: number): string[] {
  const others = names.filter((n) => n !== verified && startedAtOf(n) !== undefined).sort((a, b) => (a < b ? 1 : -1));
  let kept = 1;
  const removed: string[] = [];
  for (const name of others) {
    const tooOld = bounds.keepDays > 0 && now - startedAtOf(name)! > bounds.keepDays * DAY_MS;
    if (kept < bounds.keep && !tooOld) kept++;
    else removed.push(name);
  }
  return removed;
}

export class ConsoleBackups {
  private current?: BackupRun;
  readonly folder: string;

  constructor(
    private readonly dataDir: string,
    private readonly disk: DiskSpace,
    private readonly log: Logger,
    readonly bounds: BackupBounds,
    private readonly now: () => number = Date.now,
    private readonly command: () => string[] = corpusCommand,
  ) {
    this.folder = join(dataDir, BACKUP_FOLDER);
  }

  /** The backup running now, or the last one started since the server did. */
  last(): BackupRun | undefined {
    return this.current;
  }

  private busy(): boolean {
    return this.current?.state === "running" || this.current?.state === "verifying";
  }

  /** Starts a backup; answers why not when one is running or the disk is nearly full (D29). */
  start(operator: string): { started: string } | { refused: string } {
    if (this.busy()) return { refused: `a backup is running already (${this.current!.name})` };
    if (this.disk.low()) return { refused: "the data folder's disk is nearly full (below CORPUS_MIN_FREE_BYTES): free space first" };
    mkdirSync(this.folder, { recursive: true, mode: 0o700 });
    // None runs: what a backup killed with a server left behind is nobody's.
    this.removeLeftovers();
    const name = `corpus-${new Date(this.now()).toISOString().slice(0, 19).replaceAll(":", "-")}Z.backup`;
    const run: BackupRun = { name, startedAt: Math.floor(this.now() / 1000), state: "running" };
    this.current = run;
    const path = join(this.folder, name);
    this.log.info("console: backup started", { operator, backup: name });
    void (async () => {
      const written = await this.runCorpus(["backup", "--data-dir", this.dataDir, "--out", path]);
      if (written !== undefined) {
        Object.assign(run, { state: "failed", message: written });
        this.log.warning("console: backup failed", { backup: name, reason: written });
        return;
      }
      Object.assign(run, { state: "verifying" });
      const damaged = await this.runCorpus(["verify", "--from", path]);
      if (damaged !== undefined) {
        // Not a backup to restore from, nor to count as kept: gone, and nothing older with it.
        rmSync(path, { force: true });
        const message = `written, but it did not verify (${damaged}); removed, older backups kept`;
        Object.assign(run, { state: "failed", message });
        this.log.warning("console: backup did not verify", { backup: name, reason: damaged });
        return;
      }
      const removed = this.prune(name);
      Object.assign(run, { state: "done", removed });
      this.log.info("console: backup written and verified", { backup: name, removed });
    })();
    return { started: name };
  }

  /** Runs `corpus <args>`; undefined when it succeeded, else the first line of what it said. */
  private async runCorpus(args: string[]): Promise<string | undefined> {
    const child = Bun.spawn([...this.command(), ...args], { stdin: "ignore", stdout: "ignore", stderr: "pipe" });
    const errors = await new Response(child.stderr).text().catch(() => "");
    const code = await child.exited;
    if (code === 0) return undefined;
    return (errors.trim().split("\n")[0] ?? "").replace(/^corpus: /, "").slice(0, MESSAGE_CHARS) || `exit code ${code}`;
  }

  /** Removes the backups beyond the bounds once `verified` is known good; answers their names. */
  private prune(verified: string): string[] {
    const removed: string[] = [];
    for (const name of backupsToRemove(this.names(), verified, this.bounds, this.now())) {
      try {
        rmSync(join(this.folder, name), { force: true });
        removed.push(name);
      } catch (error) {
        this.log.warning("console: an old backup could not be removed", {
          backup: name,
          error: error instanceof Error ? error.message : String(error),
        });
      }
    }
    return removed;
  }

  /** The files a killed backup left: another entry under such a name (a folder) is left, never a reason not to start. */
  private removeLeftovers(): void {
    for (const name of this.allNames().filter((n) => PARTIAL_NAME.test(n) && this.isFile(n))) {
      try {
        rmSync(join(this.folder, name), { force: true });
      } catch (error) {
        this.log.warning("console: a partial backup could not be removed", {
          file: name,
          error: error instanceof Error ? error.message : String(error),
        });
      }
    }
  }

  /**
   * Removes the backup `name` at an operator's request: never while a backup runs (it may be
   * pruning), never the only one in the folder.
   */
  remove(operator: string, name: string): { removed: string } | { refused: string } {
    if (this.busy()) return { refused: "a backup is running: remove one once it has ended" };
    const path = this.pathOf(name);
    if (!path) return { refused: "there is no such backup in the folder" };
    if (this.names().length === 1) return { refused: `${name} is the only backup: start another first` };
    rmSync(path, { force: true });
    this.log.info("console: backup removed", { operator, backup: name });
    return { removed: name };
  }

  /**
   * The path of a finished backup named `name`, or undefined: only a name of the folder's own
   * pattern, never a path, and not the one being written or verified.
   */
  pathOf(name: string): string | undefined {
    if (!BACKUP_NAME.test(name) || (this.busy() && name === this.current!.name)) return undefined;
    const path = join(this.folder, name);
    try {
      return lstatSync(path).isFile() ? path : undefined;
    } catch {
      return undefined;
    }
  }

  private allNames(): string[] {
    try {
      return readdirSync(this.folder);
    } catch {
      return [];
    }
  }

  /**
   * The backups' names in the folder (a partial file is not one: it starts with a dot), the one
   * being written aside. A backup is a file the console wrote: a link or a folder under a
   * backup's name is none, counted neither as one kept (pruning, the only one an operator may
   * not remove) nor served (its target may be any file: the master key).
   */
  private names(): string[] {
    const writing = this.busy() ? this.current!.name : undefined;
    return this.allNames().filter((n) => BACKUP_NAME.test(n) && n !== writing && this.isFile(n));
  }

  private isFile(name: string): boolean {
    try {
      return lstatSync(join(this.folder, name)).isFile();
    } catch {
      return false; // removed meanwhile
    }
  }

  /** The finished backups in the folder, newest first. */
  list(): BackupFile[] {
    return this.names()
      .flatMap((name) => {
        try {
          const s = lstatSync(join(this.folder, name));
          return s.isFile() ? [{ name, bytes: s.size, at: Math.floor(s.mtimeMs / 1000) }] : [];
        } catch {
          return []; // removed meanwhile
        }
      })
      .sort((a, b) => (a.name < b.name ? 1 : -1));
  }
}
