// Native loaders (dlopen, SQLite's loadExtension) cannot read files embedded in the
// executable (`/$bunfs/...`). Such a file is copied once to a real file named by its
// content hash, in a private folder, and that path is used instead. `name` is the file name
// to use there: SQLite derives an extension's entry point from it (vec0.so -> sqlite3_vec_init).
import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const isEmbedded = (path: string) => path.startsWith("/$bunfs/") || path.startsWith("B:/~BUN/");

export function materialize(path: string, name: string): string {
  if (!isEmbedded(path)) return path;
  const bytes = readFileSync(path);
  const digest = createHash("sha256").update(bytes).digest("hex").slice(0, 16);
  const base = join(process.env.TMPDIR || tmpdir(), `corpus-native-${process.getuid?.() ?? "user"}`);
  mkdirSync(base, { recursive: true, mode: 0o700 });
  chmodSync(base, 0o700);
  const dir = join(base, digest);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const target = join(dir, name);
  if (!existsSync(target)) {
    const partial = `${target}.${process.pid}.tmp`;
    writeFileSync(partial, bytes, { mode: 0o500 });
    renameSync(partial, target);
  }
  return target;
}
