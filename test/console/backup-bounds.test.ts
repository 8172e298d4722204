// Which console backups go once a new one verifies (D30, D35): the newest beyond CORPUS_BACKUP_KEEP
// and those older than CORPUS_BACKUP_KEEP_DAYS, never the new one; an operator's removal never
// takes the only one nor a name outside the folder's pattern. The pruning after a real `corpus
// backup` and `corpus verify` is test/console/backup-pruning.test.ts.
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../../src/config";
import { BACKUP_FOLDER, backupsToRemove, ConsoleBackups, startedAtOf } from "../../src/console/backups";
import { createLogger, memorySink } from "../../src/log";
import { DiskSpace } from "../../src/store/disk-space";
import { tempDir } from "../helpers";

const DAY = 24 * 60 * 60 * 1000;
const nameAt = (ms: number) => `corpus-${new Date(ms).toISOString().slice(0, 19).replaceAll(":", "-")}Z.backup`;
const NOW = Date.parse("2026-11-28T12:00:00Z");
/** Daily backups, newest first: today's, yesterday's, … */
const daily = (n: number) => Array.from({ length: n }, (_, i) => nameAt(NOW - i * DAY));

describe("backupsToRemove", () => {
  test("keeps the newest KEEP, the one just verified among them; removes the oldest beyond", () => {
    const names = daily(5);
    expect(backupsToRemove(names, names[0]!, { keep: 3, keepDays: 0 }, NOW)).toEqual(names.slice(3));
    expect(backupsToRemove(names, names[0]!, { keep: 5, keepDays: 0 }, NOW)).toEqual([]);
    expect(backupsToRemove(names, names[0]!, { keep: 1, keepDays: 0 }, NOW)).toEqual(names.slice(1));
  });

  test("the one just verified is kept whatever its place or age: it is the good one", () => {
    const names = daily(4);
    // A clock set back: the new backup's name sorts oldest. It stays; the others fill the rest.
    expect(backupsToRemove(names, names[3]!, { keep: 2, keepDays: 0 }, NOW)).toEqual(names.slice(1, 3));
    expect(backupsToRemove(names, names[3]!, { keep: 1, keepDays: 1 }, NOW)).toEqual(names.slice(0, 3));
  });

  test("with KEEP_DAYS, those older than that many days go even below KEEP", () => {
    const names = daily(6);
    expect(backupsToRemove(names, names[0]!, { keep: 10, keepDays: 2 }, NOW)).toEqual(names.slice(3));
    // Both bounds: whichever removes more.
    expect(backupsToRemove(names, names[0]!, { keep: 2, keepDays: 4 }, NOW)).toEqual(names.slice(2));
  });

  test("names of another pattern are never counted nor removed", () => {
    const names = [...daily(3), "notes.txt", "corpus-latest.backup", ".corpus-x.backup.partial-0123456789ab"];
    expect(backupsToRemove(names, names[0]!, { keep: 1, keepDays: 0 }, NOW)).toEqual(daily(3).slice(1));
  });

  test("a name tells when its backup started, in UTC", () => {
    expect(startedAtOf("corpus-2026-11-28T12-00-00Z.backup")).toBe(NOW);
    expect(startedAtOf("corpus-2026-11-28T12-00-00Z.backup.bak")).toBeUndefined();
  });
});

describe("CORPUS_BACKUP_KEEP and CORPUS_BACKUP_KEEP_DAYS", () => {
  test("three by default, no bound by age; KEEP at least 1", () => {
    const config = loadConfig({});
    expect([config.CORPUS_BACKUP_KEEP, config.CORPUS_BACKUP_KEEP_DAYS]).toEqual([3, 0]);
    expect(() => loadConfig({ CORPUS_BACKUP_KEEP: "0" })).toThrow("CORPUS_BACKUP_KEEP");
    expect(() => loadConfig({ CORPUS_BACKUP_KEEP_DAYS: "-1" })).toThrow("CORPUS_BACKUP_KEEP_DAYS");
    expect(loadConfig({ CORPUS_BACKUP_KEEP: "7", CORPUS_BACKUP_KEEP_DAYS: "30" }).CORPUS_BACKUP_KEEP_DAYS).toBe(30);
  });
});

describe("an operator's removal", () => {
  const setUp = () => {
    const dataDir = tempDir("corpus-console-backups-");
    const log = createLogger("INFO", memorySink().sink);
    const backups = new ConsoleBackups(dataDir, new DiskSpace(dataDir, 0, log), log, { keep: 3, keepDays: 0 }, () => NOW);
    mkdirSync(backups.folder, { mode: 0o700 });
    return { dataDir, backups };
  };

  test("removes a listed backup, never the only one left", () => {
    const { backups } = setUp();
    const [newer, older] = daily(2);
    for (const n of [newer!, older!]) writeFileSync(join(backups.folder, n), "backup bytes");
    expect(backups.list().map((f) => f.name)).toEqual([newer!, older!]);
    expect(backups.remove("root", older!)).toEqual({ removed: older! });
    expect(backups.remove("root", newer!)).toEqual({ refused: `${newer} is the only backup: start another first` });
    expect(readdirSync(backups.folder)).toEqual([newer!]);
  });

  test("never a path, a link's target or a name outside the pattern", () => {
    const { dataDir, backups } = setUp();
    const outside = join(dataDir, "corpus.db");
    writeFileSync(outside, "the database");
    const [one, two] = daily(2);
    writeFileSync(join(backups.folder, one!), "backup bytes");
    writeFileSync(join(backups.folder, two!), "backup bytes");
    writeFileSync(join(backups.folder, "notes.txt"), "mine");
    for (const name of ["../corpus.db", `../${BACKUP_FOLDER}/${one}`, "notes.txt", `${one}/..`, ""])
      expect(backups.remove("root", name)).toEqual({ refused: "there is no such backup in the folder" });
    // A link under a backup's name is not a backup of the folder's: neither it nor its target goes.
    const linked = nameAt(NOW - 5 * DAY);
    symlinkSync(outside, join(backups.folder, linked));
    expect(backups.remove("root", linked)).toEqual({ refused: "there is no such backup in the folder" });
    expect(existsSync(outside)).toBe(true);
    expect(readdirSync(backups.folder).sort()).toEqual([one!, two!, linked, "notes.txt"].sort());
  });

  test("a link or a folder under a backup's name is no backup: not listed, not served, not counted as the one left", () => {
    const { dataDir, backups } = setUp();
    const outside = join(dataDir, "master.key");
    writeFileSync(outside, "a secret beside the folder");
    const [only, linked, folder, dangling] = daily(4);
    writeFileSync(join(backups.folder, only!), "backup bytes");
    symlinkSync(outside, join(backups.folder, linked!));
    mkdirSync(join(backups.folder, folder!));
    symlinkSync(join(dataDir, "gone"), join(backups.folder, dangling!));
    expect(backups.list().map((f) => f.name)).toEqual([only!]);
    // What the console's Download serves: never a link's target.
    expect(backups.pathOf(linked!)).toBeUndefined();
    expect(backups.pathOf(only!)).toBe(join(backups.folder, only!));
    // The only backup stays: the link, the folder and the dangling link are not others kept.
    expect(backups.remove("root", only!)).toEqual({ refused: `${only} is the only backup: start another first` });
    expect(existsSync(join(backups.folder, only!))).toBe(true);
  });
});
