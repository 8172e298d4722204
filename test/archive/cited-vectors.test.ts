// An answer's chunks are archived with their vectors from the caches, rotated by the user's
// archive rotation (D12, D25): a chunk cited again takes the vector kept for it, not another cache
// lookup (a keyed hash, a row, an AES open) and 384x384 rotation on the serving thread (issue 36);
// a chunk whose text changed, or a user deleted, is looked up again.
import { afterAll, beforeAll, expect, spyOn, test } from "bun:test";
import type { ArchiveInput } from "../../src/archive/store";
import { EMBEDDING_DIM } from "../../src/embedding/embedder";
import { testApp } from "../helpers";

let t: Awaited<ReturnType<typeof testApp>>;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t.services.archive.settled();
});

/** A unit vector along `axis`: each chunk its own, so the archive's search tells them apart. */
const along = (axis: number) => {
  const v = new Float32Array(EMBEDDING_DIM);
  v[axis] = 1;
  return v;
};
const chunk = (id: string, text: string): ArchiveInput => ({
  chunk: {
    chunk_id: id,
    connector: "docs",
    title: id,
    content: text,
    source_url: `file:///docs/${id}`,
    type: "file",
    path: id,
    date: null,
  },
  embedText: text,
  owner: "operator",
});

test("chunks cited again are archived with their kept vectors; a changed text or a deleted user's are looked up again", async () => {
  const texts = ["the lease ends in May", "the deposit is 900 EUR", "the landlord is Anna"];
  // The caches' vectors (no model in a unit test): each text its own axis, counted per lookup.
  const lookups = spyOn(t.services.embeddings, "cachedFor").mockImplementation((_owner, _asker, asked) =>
    asked.map((text) => along(texts.indexOf(text) + 1)),
  );
  try {
    const archive = t.services.archive;
    for (let i = 0; i < 5; i++)
      await archive.record(
        "alice",
        `qry_again_${i}`,
        "the lease",
        texts.map((text, k) => chunk(`c${k}`, text)),
      );
    expect(lookups).toHaveBeenCalledTimes(3);
    // Each answer's chunks hold their own vector, as rotated for alice: the nearest to each axis is its chunk.
    for (const [k, text] of texts.entries()) {
      const [nearest] = await archive.search("alice", along(k + 1), { limit: 1 });
      expect(nearest?.chunk.content).toBe(text);
      expect(nearest!.similarity).toBeGreaterThan(0.99);
    }
    // The same chunk id with another text is looked up again (and its vector is the new text's).
    texts[0] = "the lease ends in June";
    await archive.record("alice", "qry_changed", "the lease", [chunk("c0", texts[0])]);
    expect(lookups).toHaveBeenCalledTimes(4);
    // Another asker's answer citing the same chunks looks them up for them (D25).
    await archive.record("bob", "qry_bob", "the lease", [chunk("c1", texts[1]!)]);
    expect(lookups).toHaveBeenCalledTimes(5);
    // A deleted user's kept vectors go with them.
    await archive.deleteUser("alice");
    await archive.record("alice", "qry_after", "the lease", [chunk("c1", texts[1]!)]);
    expect(lookups).toHaveBeenCalledTimes(6);
  } finally {
    lookups.mockRestore();
  }
});
