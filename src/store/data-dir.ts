// The data folder and the folders around it (issue 13 item 4 and finding 3): what may be
// trusted before a byte is written there or a mode is changed. The folder must be ours and
// writable by no one else; every folder above it must be ours or root's and writable by no one
// else unless sticky (/tmp: others cannot rename or delete what is ours there); a link on the
// way must be ours or root's, in such a folder. Otherwise another local user could swap the
// folder (or point a link of theirs) between our check and our use, and a corpus run as root
// would change the mode of, and write into, whatever they chose. One rule for the database,
// the keys and the native libraries (src/native/materialize.ts).
import { chmodSync, lstatSync, mkdirSync, realpathSync, type Stats, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

/** A folder (or file) that another user could change: start-up stops, saying why and what to do. */
export class DataFolderRefused extends Error {}

/** The sticky bit: in such a folder (/tmp) others cannot rename or delete what is ours. */
const STICKY = 0o1000;

export const ownUid = () => process.geteuid?.() ?? process.getuid?.() ?? 0;

export const octal = (mode: number) => (mode & 0o7777).toString(8).padStart(4, "0");

/** The errno name of a file system error (ENOENT, ELOOP, …). */
export const code = (error: unknown) => (error as NodeJS.ErrnoException).code;

/** Whether anything (a link included, never followed) is at `path`. */
export function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch (error) {
    if (code(error) === "ENOENT") return false;
    throw error;
  }
}

function refused(dir: string, why: string, fix: string): DataFolderRefused {
  return new DataFolderRefused(`the data folder ${dir} is not safe to use: ${why}; ${fix}`);
}

/**
 * Why `dir` and the folders above it are not safe for something of ours kept in them (`what`),
 * or undefined: each ours or root's, and writable by others only when sticky.
 */
export function unsafeFoldersAbove(dir: string, uid = ownUid()): { why: string; fix: string } | undefined {
  for (let d = realpathSync(dir); ; d = dirname(d)) {
    const st = statSync(d);
    if (st.uid !== uid && st.uid !== 0)
      return {
        why: `${d} is owned by uid ${st.uid}, who could swap what is in it`,
        fix: `keep it under folders owned by root or by uid ${uid}`,
      };
    if (st.mode & 0o022 && !(st.mode & STICKY))
      return {
        why: `others may write to ${d} (mode ${octal(st.mode)}) and swap what is in it`,
        fix: `chmod go-w ${d}, or move it elsewhere`,
      };
    if (d === dirname(d)) return undefined;
  }
}

/**
 * The links on the way to `path` as it is written (realpath sees only where they lead): each
 * must be ours or root's, in folders nobody else can change. A link another user made in a
 * shared folder (/tmp/corpus-data -> /root/anything) would otherwise choose where we write.
 */
function checkLinksOnTheWay(path: string, uid: number): void {
  let at = "/";
  for (const part of path.split("/").filter(Boolean)) {
    const next = join(at, part);
    let st: Stats;
    try {
      st = lstatSync(next);
    } catch (error) {
      if (code(error) === "ENOENT") return;
      throw error;
    }
    if (st.isSymbolicLink()) {
      if (st.uid !== uid && st.uid !== 0)
        throw refused(
          path,
          `${next} is a link owned by uid ${st.uid}, who chose where it leads`,
          "remove the link, or name the folder by its real path",
        );
      const around = unsafeFoldersAbove(at, uid);
      if (around) throw refused(path, `the link ${next} could be swapped: ${around.why}`, around.fix);
    }
    at = next;
  }
}

/**
 * The data folder's real path, once it, the links on the way to it and every folder above it
 * are safe from other users (see the top of this file). Throws DataFolderRefused otherwise.
 */
export function checkedDataDir(dataDir: string): string {
  const uid = ownUid();
  const given = resolve(dataDir);
  checkLinksOnTheWay(given, uid);
  const real = realpathSync(given);
  const top = statSync(real);
  if (!top.isDirectory()) throw refused(real, "it is not a folder", "name a folder, or a path where one may be created");
  if (top.uid !== uid)
    throw refused(
      real,
      `it is owned by uid ${top.uid}, not by this process (uid ${uid})`,
      "give the data folder to the user corpus runs as, or run corpus as its owner",
    );
  if (top.mode & 0o022)
    throw refused(real, `others may write to it (mode ${octal(top.mode)})`, `chmod 700 ${real}, after checking what is in it`);
  if (real !== dirname(real)) {
    const above = unsafeFoldersAbove(dirname(real), uid);
    if (above) throw refused(real, `above it, ${above.why}`, above.fix);
  }
  return real;
}

/**
 * Creates the data folder (0700) where nothing is, checks it by the rule above, and only then,
 * it being ours, takes group and other permissions off it. Returns its real path.
 */
export function ensureDataDir(dir: string): string {
  const path = resolve(dir);
  if (!exists(path)) {
    // Checked before anything is made: made through another user's link, or in their folder,
    // it would be theirs to swap.
    const uid = ownUid();
    checkLinksOnTheWay(path, uid);
    let parent = dirname(path);
    while (!exists(parent)) parent = dirname(parent);
    const around = unsafeFoldersAbove(parent, uid);
    if (around) throw refused(path, `it would be made where ${around.why}`, around.fix);
    mkdirSync(path, { recursive: true, mode: 0o700 });
  }
  const real = checkedDataDir(path);
  if (statSync(real).mode & 0o077) chmodSync(real, 0o700);
  return real;
}
