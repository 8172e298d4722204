// Every file the single executable carries besides code. `bun build --compile` embeds each
// import below; under `bun run` they resolve to the files on disk. TypeScript sees some of
// them as modules, hence the casts: each value is a path.

// The int8 variant: half the size of fp16, the same vectors on every CPU (README).
import modelFile from "../../models/all-MiniLM-L6-v2.int8.onnx" with { type: "file" };
import manifest from "../../models/manifest.json";
import tokenizerFile from "../../models/tokenizer.json" with { type: "file" };
import onnxRuntimeLibrary from "../../node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1" with { type: "file" };
import sqliteVecExtension from "../../node_modules/sqlite-vec-linux-x64/vec0.so" with { type: "file" };
import swaggerUiStyle from "../../node_modules/swagger-ui-dist/swagger-ui.css" with { type: "file" };
// @ts-expect-error: a plain script, imported as a file path
import swaggerUiBundle from "../../node_modules/swagger-ui-dist/swagger-ui-bundle.js" with { type: "file" };

/** A native library a loader needs as a real file, and the file name it must have there. */
export interface NativeLibrary {
  source: string;
  /** SQLite derives an extension's entry point from it (vec0.so -> sqlite3_vec_init); onnxruntime's binding finds its library by soname. */
  name: string;
}

export const nativeLibraries = {
  sqliteVec: { source: sqliteVecExtension, name: "vec0.so" },
  onnxRuntime: { source: onnxRuntimeLibrary, name: "libonnxruntime.so.1" },
} as const satisfies Record<string, NativeLibrary>;

/** An embedding model: its file, and its sha256, which names the vectors it made (src/embedding/model-identity.ts). */
export interface ModelAsset {
  file: string;
  sha256: string;
}

/** The model the executable ships (the file imported above; test/native checks the sha256 against the file's bytes). */
export const embeddingModel: ModelAsset = {
  file: modelFile,
  sha256: manifest.models.find((m) => m.file === "all-MiniLM-L6-v2.int8.onnx")!.sha256,
};

export const assets = {
  modelFile,
  tokenizerFile: tokenizerFile as unknown as string,
  swaggerUiBundle: swaggerUiBundle as unknown as string,
  swaggerUiStyle,
} as const;
