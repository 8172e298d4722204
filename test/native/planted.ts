// A library as another local user would plant it: its constructor leaves a mark the moment
// it is loaded, and it answers sqlite-vec's entry point, so a load would succeed quietly.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../helpers";

export function plantedLibrary(): { path: string; mark: string } {
  const dir = tempDir("corpus-planted-");
  const mark = join(dir, "constructor-ran");
  const source = join(dir, "planted.c");
  writeFileSync(
    source,
    `#include <stdio.h>
__attribute__((constructor)) static void planted(void) { FILE *f = fopen("${mark}", "w"); if (f) fclose(f); }
int sqlite3_vec_init(void *db, char **err, const void *api) { return 0; }
`,
  );
  const path = join(dir, "planted.so");
  const cc = Bun.spawnSync(["cc", "-shared", "-fPIC", "-o", path, source]);
  if (cc.exitCode !== 0) throw new Error(`cc: ${cc.stderr}`);
  return { path, mark };
}
