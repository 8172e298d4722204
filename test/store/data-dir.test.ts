// Issue 13 finding 3: with the data folder in a shared sticky folder (/tmp), another local user
// could make corpus, run as root, chmod any folder and write its database there, through a link
// of theirs where the data folder was to be; ensureDataDir followed links and never asked whose
// anything was. Runs as root here and in CI: setpriv plays the other user (uid 65534).
import { describe, expect, test } from "bun:test";
import { chmodSync, existsSync, lchownSync, lstatSync, mkdirSync, readdirSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createLogger, memorySink } from "../../src/log";
import { createServices } from "../../src/services";
import { DataFolderRefused, ensureDataDir } from "../../src/store/data-dir";
import { tempDir, testConfig } from "../helpers";

const OTHER_UID = 65534;

/** Runs `script` in a shell as the other user, as an attacker on the same machine would. */
function asOtherUser(script: string): void {
  const run = Bun.spawnSync(["setpriv", `--reuid=${OTHER_UID}`, `--regid=${OTHER_UID}`, "--clear-groups", "sh", "-c", script]);
  if (run.exitCode !== 0) throw new Error(`as uid ${OTHER_UID}: ${run.stderr.toString()}`);
}

/** A folder like /tmp (root's, sticky, writable by all), and a victim folder of root's (0755, one file). */
function stage() {
  const base = tempDir("corpus-shared-");
  chmodSync(base, 0o755);
  const shared = join(base, "tmp");
  mkdirSync(shared);
  chmodSync(shared, 0o1777);
  const victim = join(base, "victim");
  mkdirSync(victim, { mode: 0o755 });
  chmodSync(victim, 0o755);
  writeFileSync(join(victim, "notes.txt"), "root's own\n");
  return { shared, victim };
}

const mode = (path: string) => statSync(path).mode & 0o7777;

const refusal = (dir: string) => {
  try {
    ensureDataDir(dir);
  } catch (error) {
    expect(error).toBeInstanceOf(DataFolderRefused);
    return (error as Error).message;
  }
  throw new Error("not refused");
};

describe("the data folder is checked before anything is changed or written (issue 13 finding 3)", () => {
  test("another user's link where the data folder is to be: start-up stops; the folder it points at keeps its mode and gets no database", async () => {
    const { shared, victim } = stage();
    const data = join(shared, "corpus-victim3");
    asOtherUser(`ln -s ${victim} ${data}`);
    expect(lstatSync(data).uid).toBe(OTHER_UID);
    expect(refusal(data)).toBe(
      `the data folder ${data} is not safe to use: ${data} is a link owned by uid ${OTHER_UID}, who chose where it leads; remove the link, or name the folder by its real path`,
    );
    // The whole start-up, as `corpus serve --data-dir` runs it.
    await expect(createServices(testConfig({ CORPUS_DATA_DIR: data }), createLogger("CRITICAL", memorySink().sink))).rejects.toThrow(
      "is a link owned by uid 65534",
    );
    expect(mode(victim)).toBe(0o755);
    expect(readdirSync(victim)).toEqual(["notes.txt"]);
    expect(existsSync(`${data}.master.key`)).toBe(false);
  });

  test("a link of another user's above the data folder: refused before the folder is made in its target", () => {
    const { shared, victim } = stage();
    asOtherUser(`ln -s ${victim} ${join(shared, "evil")}`);
    expect(refusal(join(shared, "evil", "data"))).toContain(`${join(shared, "evil")} is a link owned by uid ${OTHER_UID}`);
    expect(readdirSync(victim)).toEqual(["notes.txt"]);
  });

  test("a folder another user made where the data folder is to be: refused, never chmodded (it stays theirs, as it was)", () => {
    const { shared } = stage();
    const data = join(shared, "corpus-data");
    asOtherUser(`mkdir -m 777 ${data}`);
    expect(refusal(data)).toContain(`it is owned by uid ${OTHER_UID}, not by this process`);
    expect(mode(data)).toBe(0o777);
  });

  test("a folder of ours that others may write to is refused, not tightened: what they left in it would be used", () => {
    const { shared } = stage();
    const data = join(shared, "open");
    mkdirSync(data);
    chmodSync(data, 0o777);
    expect(refusal(data)).toContain("others may write to it (mode 0777)");
    expect(mode(data)).toBe(0o777);
  });

  test("in the shared sticky folder, a data folder of ours is made 0700, and a link of ours to one is followed", () => {
    const { shared } = stage();
    const made = join(shared, "made", "data");
    expect(ensureDataDir(made)).toBe(made);
    expect(mode(made)).toBe(0o700);
    const ours = join(shared, "ours");
    mkdirSync(ours, { mode: 0o755 });
    const link = join(shared, "link");
    symlinkSync(ours, link);
    lchownSync(link, 0, 0);
    expect(ensureDataDir(link)).toBe(ours);
    expect(mode(ours)).toBe(0o700);
  });
});
