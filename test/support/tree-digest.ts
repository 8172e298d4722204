// What a folder holds, as one string to compare before and after a command that must not change
// it: each entry's path, kind, mode and (a file's) sha256, links not followed.
import { createHash } from "node:crypto";
import { lstatSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";

export function treeDigest(root: string): string {
  const lines: string[] = [];
  const walk = (relative: string) => {
    const path = join(root, relative);
    const st = lstatSync(path);
    const mode = (st.mode & 0o7777).toString(8);
    if (st.isSymbolicLink()) lines.push(`${relative} link ${mode} ${readlinkSync(path)}`);
    else if (st.isDirectory()) {
      lines.push(`${relative}/ ${mode}`);
      for (const name of readdirSync(path).sort()) walk(join(relative, name));
    } else lines.push(`${relative} ${mode} ${createHash("sha256").update(readFileSync(path)).digest("hex")}`);
  };
  walk("");
  return lines.join("\n");
}
