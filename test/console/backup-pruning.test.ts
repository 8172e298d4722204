// Console backups kept within bounds (D30, D35), with real `corpus backup` and `corpus verify`
// children on a real data folder: with CORPUS_BACKUP_KEEP=2 the third backup, once verified,
// removes the oldest; a backup that does not verify (a byte flipped after it was written) is
// removed and nothing older is; KEEP_DAYS removes what is older, never the new one; a partial
// file a killed backup left behind goes at the next start.
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type BackupBounds, type BackupRun, ConsoleBackups, corpusCommand } from "../../src/console/backups";
import { createLogger, memorySink } from "../../src/log";
import { tempDir, testApp } from "../helpers";
import { until } from "../support/wait";

setDefaultTimeout(120_000);

const DAY = 24 * 60 * 60 * 1000;

const apps: Array<Awaited<ReturnType<typeof testApp>>> = [];
afterAll(async () => {
  for (const t of apps) await t.services.close();
});

/** Console backups of a data folder of their own (a user's wrapped key in it), on a clock a test moves. */
async function consoleBackups(bounds: BackupBounds, command: () => string[] = corpusCommand) {
  const t = await testApp();
  apps.push(t);
  t.services.userKeys.keyFor("alice");
  const clock = { now: Date.parse("2026-11-01T09:00:00Z") };
  const logs = memorySink();
  const log = createLogger("INFO", logs.sink);
  const backups = new ConsoleBackups(t.config.CORPUS_DATA_DIR, t.services.disk, log, bounds, () => clock.now, command);
  return { backups, clock, logs };
}

/** Starts a backup and waits for it to end: its run as the page shows it. */
async function backUp(backups: ConsoleBackups): Promise<BackupRun> {
  const started = backups.start("root");
  expect(started).toHaveProperty("started");
  return until("the backup to end", () => {
    const run = backups.last()!;
    return run.state === "done" || run.state === "failed" ? { ...run } : undefined;
  });
}

const listed = (backups: ConsoleBackups) => backups.list().map((f) => f.name);

describe("console backups, pruned once a new one verifies", () => {
  test("KEEP=2: the third, verified, removes the oldest; the page's run names it", async () => {
    const { backups, clock, logs } = await consoleBackups({ keep: 2, keepDays: 0 });
    const names: string[] = [];
    for (let i = 0; i < 3; i++) {
      const run = await backUp(backups);
      expect(run.state).toBe("done");
      names.push(run.name);
      clock.now += DAY;
    }
    expect(listed(backups)).toEqual([names[2]!, names[1]!]);
    expect(backups.last()).toMatchObject({ state: "done", removed: [names[0]!] });
    expect(readdirSync(backups.folder).sort()).toEqual([names[1]!, names[2]!].sort());
    expect(logs.records().find((r) => r.message === "console: backup written and verified" && r.backup === names[2])).toMatchObject({
      removed: [names[0]!],
    });
  });

  test("a backup that does not verify is removed, and nothing older is", async () => {
    // `corpus backup` as it is, then a byte of its database flipped on disk: what `corpus verify` must catch.
    const script = join(tempDir("corpus-console-damage-"), "damaging-corpus.ts");
    writeFileSync(
      script,
      `const [command, ...rest] = process.argv.slice(2);
const code = Bun.spawnSync([${corpusCommand()
        .map((p) => JSON.stringify(p))
        .join(", ")}, command, ...rest], { stdio: ["ignore", "inherit", "inherit"] }).exitCode;
if (command === "backup" && code === 0 && process.env.DAMAGE === "yes") {
  const out = rest[rest.indexOf("--out") + 1];
  const fd = require("node:fs").openSync(out, "r+");
  const byte = Buffer.alloc(1);
  require("node:fs").readSync(fd, byte, 0, 1, 4096);
  byte[0] ^= 1;
  require("node:fs").writeSync(fd, byte, 0, 1, 4096);
}
process.exit(code);
`,
    );
    const damage = { on: false };
    const command = () => (damage.on ? ["/usr/bin/env", "DAMAGE=yes", process.execPath, script] : [process.execPath, script]);
    const { backups, clock } = await consoleBackups({ keep: 1, keepDays: 0 }, command);
    const good = await backUp(backups);
    expect(good.state).toBe("done");
    clock.now += DAY;
    damage.on = true;
    const bad = await backUp(backups);
    expect(bad.state).toBe("failed");
    expect(bad.state === "failed" && bad.message).toMatch(/^written, but it did not verify \(.*corpus\.db does not match its sha256\)/);
    expect(readdirSync(backups.folder)).toEqual([good.name]);
    // The good one still verifies, and is whole.
    expect(readFileSync(join(backups.folder, good.name)).subarray(-16).toString()).toBe("corpus-backup-v1");
  });

  test("KEEP_DAYS: what is older goes; the new one stays; a killed backup's partial file goes at the next start", async () => {
    const { backups, clock } = await consoleBackups({ keep: 10, keepDays: 2 });
    const first = await backUp(backups);
    clock.now += DAY;
    const second = await backUp(backups);
    expect(listed(backups)).toEqual([second.name, first.name]);
    const partial = join(backups.folder, `.${second.name}.partial-0123456789ab`);
    writeFileSync(partial, "half a backup");
    writeFileSync(join(backups.folder, "notes.txt"), "the operator's own");
    clock.now += 2 * DAY;
    const third = await backUp(backups);
    expect(third).toMatchObject({ state: "done", removed: [first.name] });
    expect(readdirSync(backups.folder).sort()).toEqual([second.name, third.name, "notes.txt"].sort());
  });

  test("a folder under a partial file's name stops no backup: only files a killed backup left go", async () => {
    const { backups, clock } = await consoleBackups({ keep: 2, keepDays: 0 });
    const first = await backUp(backups);
    const stray = `.${first.name}.partial-0123456789ab`;
    mkdirSync(join(backups.folder, stray));
    clock.now += DAY;
    const second = await backUp(backups);
    expect(second.state).toBe("done");
    expect(readdirSync(backups.folder).sort()).toEqual([first.name, second.name, stray].sort());
  });
});
