// Checks of D19 (read-only at every level): the bytes and mtimes of every file under a
// folder, before and after.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

export function fingerprint(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const full = join(d, e.name);
      if (e.isDirectory()) walk(full);
      else if (e.isFile()) out.set(full, `${createHash("sha256").update(readFileSync(full)).digest("hex")}:${statSync(full).mtimeMs}`);
    }
  };
  walk(dir);
  return out;
}
