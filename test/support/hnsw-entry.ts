// The entry of a tiny executable that builds an embedded HNSW index and searches it: what
// test/vectors/hnsw-executable.test.ts compiles with `bun build --compile` and runs alone.
import type { KeyedVector } from "../../src/crypto/rotation";
import { EMBEDDING_DIM } from "../../src/embedding/embedder";
import { EmbeddedHnsw } from "../../src/vectors/hnsw";

const n = 500;
const flat = Float32Array.from({ length: n * EMBEDDING_DIM }, (_, i) => Math.sin(i * 0.37 + (i % 97)));
const index = EmbeddedHnsw.create();
index.add(
  Array.from({ length: n }, (_, i) => i + 1),
  flat,
);
const query = flat.slice(41 * EMBEDDING_DIM, 42 * EMBEDDING_DIM) as KeyedVector;
console.log(JSON.stringify({ size: index.size, nearest: index.search(query, 1)[0] }));
