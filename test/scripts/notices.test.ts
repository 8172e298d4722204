// The third-party notices (D35): every package the executable bundles has one, with a licence id
// and a text; a package without either stops the build. The bundles here are made in memory by
// Bun's bundler (as the build's first pass), of corpus itself and of small projects made here.
import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ENTRYPOINTS } from "../../scripts/build";
import { type BundleParts, bundledParts, checkNotices, gatherNotices, noticesFor, withoutNotice } from "../../scripts/notices/gather";
import { listNotices, type Notice, renderNotices } from "../../src/licenses/notices";
import { tempDir } from "../helpers";

// Bundling corpus takes a few seconds on a busy two-core machine.
setDefaultTimeout(60_000);

const root = join(import.meta.dir, "../..");
const MIT = readFileSync(join(root, "scripts/notices/standard/MIT.txt"), "utf8");

describe("corpus's own bundle", () => {
  let parts: BundleParts;
  let notices: Notice[];
  beforeAll(async () => {
    parts = await bundledParts({ entrypoints: ENTRYPOINTS, target: "bun", format: "esm" });
    notices = gatherNotices(parts);
  });
  const lock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8")) as {
    packages: Record<string, { version?: string }>;
  };

  test("every bundled package is a package of the lockfile, and has a notice with a licence id and a text", () => {
    expect(parts.packages.size).toBeGreaterThan(50);
    expect(withoutNotice(parts, notices)).toEqual([]);
    for (const folder of parts.packages.keys()) {
      const path = folder.slice(root.length + 1);
      const pkg = JSON.parse(readFileSync(join(folder, "package.json"), "utf8")) as { name: string; version: string };
      expect(lock.packages[path]?.version, path).toBe(pkg.version);
      const notice = notices.find((n) => n.name === pkg.name && n.version === pkg.version);
      expect(notice?.license, path).toMatch(/\S/);
      expect(notice!.texts.length, path).toBeGreaterThan(0);
      for (const t of notice!.texts) expect(t.text.trim(), `${path} ${t.file}`).not.toBe("");
      expect(Math.max(...notice!.texts.map((t) => t.text.length)), path).toBeGreaterThan(100);
    }
  });

  test("the native parts and the data are there: onnxruntime, sqlite-vec, SQLite, Bun, the model with its source", () => {
    const byName = new Map(notices.map((n) => [n.name, n]));
    expect(byName.get("onnxruntime-node")!.note).toContain("libonnxruntime.so.1");
    expect(byName.get("sqlite-vec-linux-x64")!.note).toContain("vec0.so");
    expect(byName.get("sqlite-vec-linux-x64")!.license).toBe("MIT OR Apache-2.0");
    expect(byName.get("SQLite")!.version).toMatch(/^3\.\d+\.\d+$/);
    expect(byName.get("Bun")!.version).toBe(Bun.version);
    const model = byName.get("all-MiniLM-L6-v2")!;
    expect(model.license).toBe("Apache-2.0");
    expect(model.source).toBe("https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2");
    expect(model.texts[0]!.text).toBe(readFileSync(join(root, "LICENSE"), "utf8"));
    expect(model.version).toContain("all-MiniLM-L6-v2.int8.onnx");
    // A licence text that did not ship is said to be the standard one.
    const postgres = byName.get("postgres")!;
    expect(postgres.texts.map((t) => t.file)).toEqual(["Unlicense (standard text)"]);
    expect(postgres.note).toContain("No licence file ships");
  });

  test("a notice dropped is a package without one, and stops the build", () => {
    const dropped = notices.filter((n) => n.name !== "elysia");
    expect(withoutNotice(parts, dropped)).toEqual([`elysia@${notices.find((n) => n.name === "elysia")!.version}`]);
    const fakeBuild = { metafile: { inputs: Object.fromEntries([...parts.packages.keys()].map((f) => [join(f, "index.js"), {}])) } };
    expect(() => checkNotices(fakeBuild as never, dropped)).toThrow(/bundles elysia@.* without a notice/);
    expect(
      withoutNotice(
        parts,
        notices.filter((n) => n.kind !== "model"),
      ),
    ).toEqual(["the embedding model"]);
  });

  test("the text holds every entry's name, version, licence and texts; the list has them without the texts", () => {
    const text = renderNotices(notices);
    for (const n of notices) {
      expect(text).toContain(`\n${n.name} ${n.version}\nLicence: ${n.license}\n`);
      for (const t of n.texts) expect(text).toContain(`--- ${t.file} ---\n${t.text.trimEnd()}`);
    }
    const list = listNotices(notices);
    expect(list.length).toBe(notices.length);
    expect(JSON.stringify(list)).not.toContain("Permission is hereby granted");
  });
});

/** A project with one entry importing each named package, each made with these package.json fields and files. */
function project(packages: Record<string, { json: Record<string, unknown>; files?: Record<string, string> }>) {
  const dir = tempDir("corpus-notices-");
  mkdirSync(join(dir, "src"));
  writeFileSync(
    join(dir, "src/main.ts"),
    Object.keys(packages)
      .map((name, i) => `import * as p${i} from "${name}"; console.log(p${i});`)
      .join("\n"),
  );
  for (const [name, { json, files }] of Object.entries(packages)) {
    const folder = join(dir, "node_modules", name);
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, "package.json"), JSON.stringify({ name, version: "1.0.0", main: "index.js", ...json }));
    writeFileSync(join(folder, "index.js"), "export const x = 1;\n");
    for (const [file, text] of Object.entries(files ?? {})) writeFileSync(join(folder, file), text);
  }
  const layout = { own: [join(dir, "src")], models: join(dir, "models") };
  return { notices: () => noticesFor({ entrypoints: [join(dir, "src/main.ts")], target: "bun", format: "esm" }, layout), dir };
}

describe("a bundled package", () => {
  test("without a licence id stops the build, even with a licence file", async () => {
    const p = project({ "no-id": { json: {}, files: { LICENSE: MIT } } });
    await expect(p.notices()).rejects.toThrow(/^no-id@1\.0\.0 \(\/.+\/node_modules\/no-id\) has no licence id in its package\.json$/);
  });

  test("with neither a licence file nor a standard text of its licence stops the build", async () => {
    const p = project({ odd: { json: { license: "WTFPL" } } });
    await expect(p.notices()).rejects.toThrow(
      /^odd@1\.0\.0 \(.+\) ships no licence file, and there is no standard text of WTFPL in scripts\/notices\/standard\/$/,
    );
  });

  test("its own licence files are its texts; without one, the standard text, and its entry says so", async () => {
    const notices = await project({
      shipped: { json: { license: "(MIT OR Apache-2.0)" }, files: { "LICENSE-MIT": "mine", NOTICE: "notice", "README.md": "no" } },
      bare: { json: { license: "MIT", author: "Someone" } },
      legacy: { json: { licenses: [{ type: "MIT" }] }, files: { COPYING: "copying" } },
    }).notices();
    const byName = new Map(notices.map((n) => [n.name, n]));
    expect(byName.get("shipped")!.texts).toEqual([
      { file: "LICENSE-MIT", text: "mine" },
      { file: "NOTICE", text: "notice" },
    ]);
    expect(byName.get("shipped")!.note).toBeUndefined();
    expect(byName.get("bare")!.texts).toEqual([{ file: "MIT (standard text)", text: MIT }]);
    expect(byName.get("bare")!.note).toBe(
      "No licence file ships in the package: the standard text follows; its package.json names Someone.",
    );
    expect(byName.get("legacy")!.license).toBe("MIT");
    // No model in this bundle: only the runtime's notices besides the packages.
    expect(notices.map((n) => n.name)).toEqual(["Bun", "SQLite", "bare", "legacy", "shipped"]);
  });

  test("a file from outside the project's code, its model and its packages stops the build", async () => {
    const p = project({});
    const outside = tempDir("corpus-outside-");
    writeFileSync(join(outside, "stray.ts"), "export const y = 2;\n");
    writeFileSync(join(p.dir, "src/main.ts"), `import { y } from "${join(outside, "stray.ts")}"; console.log(y);`);
    await expect(p.notices()).rejects.toThrow(/stray\.ts, which is neither corpus's own code, the model nor a package's file/);
  });
});
