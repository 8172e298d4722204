// The embedding service storing a constant vector for each text instead of running the model: for
// tests about what is embedded and when, not about meaning (the model would take minutes here).
import { EMBEDDING_DIM } from "../../src/embedding/embedder";
import type { EmbeddingService } from "../../src/embedding/service";

type Embedding = {
  embed: (owner: string, texts: string[], ...rest: unknown[]) => Promise<Float32Array[]>;
  store: (owner: string, texts: string[], vectors: Float32Array[]) => void;
};

/**
 * Replaces `embeddings.embed` until `restore()`; `stored()` counts the texts stored meanwhile.
 * `before`, if given, is awaited before each call's vectors are made (a test holds a page there).
 */
export function vectorsWithoutModel(
  embeddings: EmbeddingService,
  before?: () => Promise<void>,
): { stored: () => number; restore: () => void } {
  const service = embeddings as unknown as Embedding;
  const real = service.embed;
  let stored = 0;
  service.embed = async (owner, texts) => {
    await before?.();
    const vectors = texts.map(() => new Float32Array(EMBEDDING_DIM).fill(0.05));
    service.store(owner, texts, vectors);
    stored += texts.length;
    return vectors;
  };
  return { stored: () => stored, restore: () => (service.embed = real) };
}
