// Unit vectors shaped as sentence embeddings are, for the vector stores' tests: 40 topics, each
// vector its topic's centre moved within 8 directions of its own (neighbourhoods of low
// dimension; scripts/bench/knn.ts draws them so too). Seeded: the same set on every run.
import { EMBEDDING_DIM } from "../../src/embedding/embedder";

export function unitVectors(n: number, seed: number): Float32Array[] {
  let s = seed;
  const next = () => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    return s / 2 ** 32 - 0.5;
  };
  let t = 7;
  const fixed = () => {
    t = (Math.imul(t, 1103515245) + 12345) >>> 0;
    return t / 2 ** 32 - 0.5;
  };
  const topics = Array.from({ length: 40 }, () => ({
    centre: Float32Array.from({ length: EMBEDDING_DIM }, fixed),
    ways: Array.from({ length: 8 }, () => Float32Array.from({ length: EMBEDDING_DIM }, fixed)),
  }));
  return Array.from({ length: n }, () => {
    const topic = topics[Math.floor((next() + 0.5) * 40)]!;
    const v = Float32Array.from(topic.centre);
    for (const way of topic.ways) {
      const z = next();
      for (let j = 0; j < EMBEDDING_DIM; j++) v[j]! += z * way[j]!;
    }
    const norm = Math.hypot(...v);
    return v.map((x) => x / norm);
  });
}
