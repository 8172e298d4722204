// What the archive keeps of cited documents (D36): one copy of a version however often it is
// cited, and only the newest KEPT_DOCUMENT_VERSIONS versions of a record that keeps changing (a
// log, a sheet edited daily), each of which would otherwise add its whole text at every answer
// citing it. The quotes of an older version stay archived with their sha256. And a record's
// whole text (up to 4 M characters, ~30 ms to hash) is hashed for its id once per version, not at
// every question citing it.
import { afterAll, beforeAll, describe, expect, spyOn, test } from "bun:test";
import * as nodeCrypto from "node:crypto";
import { archivedChunk, archivedDocument, type CitedRanked, citationsMade, citeChunks } from "../../src/archive/answer";
import { KEPT_DOCUMENT_VERSIONS } from "../../src/archive/store";
import { openDocument } from "../../src/documents/open";
import { EMBEDDING_DIM } from "../../src/embedding/embedder";
import type { RankedChunk } from "../../src/retrieval/search";
import { testApp } from "../helpers";

let t: Awaited<ReturnType<typeof testApp>>;

beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t.services.archive.settled();
});

/** A ranked chunk of the record `docs/activity.log` with `content` (the shape search gives). */
const ranked = (content: string): RankedChunk =>
  ({
    connectorId: "docs",
    connectorLabel: "Papers",
    owner: "alice",
    record: {
      id: "activity.log",
      title: "activity.log",
      content,
      source_url: "file:///home/alice/docs/activity.log",
      type: "file",
      path: "activity.log",
      date: null,
      metadata: {},
    },
    chunkIndex: 0,
    text: content.slice(0, 40),
    score: 1,
  }) as unknown as RankedChunk;

/** Archives one answer citing `content`, as /v1/query and the MCP tools do (vector given: no model). */
function cite(queryId: string, content: string): CitedRanked {
  const [cited] = citeChunks(t.services.archive, "alice", [ranked(content)]);
  t.services.archive.store(
    "alice",
    queryId,
    "what happened",
    [{ chunk: archivedChunk(cited!), embedText: cited!.c.text, document: archivedDocument(cited!), recordKey: cited!.recordKey }],
    [new Float32Array(EMBEDDING_DIM).fill(0.01)],
  );
  return cited!;
}

const documentRows = () =>
  t.db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM archive_documents WHERE user_id = ?").get("alice")!.n;

describe("archived documents", () => {
  test("one version cited many times is kept once", () => {
    const big = "entry ".repeat(50_000);
    for (let i = 0; i < 20; i++) cite(`qry_same_${i}`, big);
    expect(documentRows()).toBe(1);
  });

  test("a record changing at every answer: only its newest versions are kept whole; the newest opens", async () => {
    const versions: CitedRanked[] = [];
    for (let i = 0; i < KEPT_DOCUMENT_VERSIONS * 3; i++) versions.push(cite(`qry_v_${i}`, `day ${i}: ${"entry ".repeat(10_000)}`));
    // Was 1 + 24 rows, one whole copy per version.
    expect(documentRows()).toBe(KEPT_DOCUMENT_VERSIONS);
    const newest = versions.at(-1)!;
    expect((await openDocument(t.services.archive, "alice", newest.documentId))?.document.text).toStartWith(`day ${versions.length - 1}:`);
    expect((await openDocument(t.services.archive, "alice", `chnk_${newest.chunkId}`))?.cited?.sha256).toBe(newest.sha256);
    // The oldest version's quote stays archived, with its hash; its whole document is no longer kept.
    expect((await t.services.archive.citedChunk("alice", versions[0]!.chunkId))?.chunk.sha256).toBe(versions[0]!.sha256);
    expect(await openDocument(t.services.archive, "alice", versions[0]!.documentId)).toBeUndefined();
  });
});

describe("document ids", () => {
  test("a record's whole text is hashed once per version, not at every question citing it", () => {
    const hashes = spyOn(nodeCrypto, "createHash");
    try {
      const hashed = (content: string) => {
        const before = hashes.mock.calls.length;
        citeChunks(t.services.archive, "alice", [ranked(content)]);
        return hashes.mock.calls.length - before;
      };
      const big = `ledger ${"line ".repeat(200_000)}`;
      // The record and the chunk the first time; then only the chunk (was 2 at every question).
      expect([hashed(big), hashed(big), hashed(big)]).toEqual([2, 1, 1]);
      // A new version is hashed again, and its id changes.
      const [before] = citeChunks(t.services.archive, "alice", [ranked(big)]);
      expect(hashed(`${big}!`)).toBe(2);
      const [after] = citeChunks(t.services.archive, "alice", [ranked(`${big}!`)]);
      expect(after!.documentId).not.toBe(before!.documentId);
      // Another user's question hashes it for themselves: no user's is made faster by another's.
      const before2 = hashes.mock.calls.length;
      citeChunks(t.services.archive, "bob", [ranked(big)]);
      expect(hashes.mock.calls.length - before2).toBe(2);
    } finally {
      hashes.mockRestore();
    }
  });
});

describe("cited ids of a frozen record (a local index's, opened once per version)", () => {
  const frozenRanked = (content: string): RankedChunk => {
    const c = ranked(content);
    Object.freeze(c.record.metadata);
    Object.freeze(c.record);
    return c;
  };

  test("met again, a chunk's ids are neither hashed nor keyed again; another user's, another version's, are", () => {
    const hashes = spyOn(nodeCrypto, "createHash");
    const hmacs = spyOn(nodeCrypto, "createHmac");
    try {
      const work = (user: string, c: RankedChunk) => {
        const before = [hashes.mock.calls.length, hmacs.mock.calls.length, citationsMade.count];
        const [cited] = citeChunks(t.services.archive, user, [c]);
        return {
          cited: cited!,
          made: [hashes.mock.calls.length - before[0]!, hmacs.mock.calls.length - before[1]!, citationsMade.count - before[2]!],
        };
      };
      const c = frozenRanked(`invoice 7 ${"line ".repeat(1_000)}`);
      const first = work("alice", c);
      // The record's text and the chunk's hashed, three HMACs (document, chunk, record).
      expect(first.made).toEqual([2, 3, 1]);
      for (let i = 0; i < 3; i++) {
        const again = work("alice", c);
        expect(again.made).toEqual([0, 0, 0]);
        expect({ ...again.cited, c: undefined }).toEqual({ ...first.cited, c: undefined });
      }
      // Another user's ids are theirs, made under their key.
      const bob = work("bob", c);
      expect(bob.made[2]).toBe(1);
      expect(bob.cited.documentId).not.toBe(first.cited.documentId);
      // Another version of the record is another frozen object: made again, another id.
      const next = work("alice", frozenRanked(`invoice 7 ${"line ".repeat(1_000)}!`));
      expect(next.made[2]).toBe(1);
      expect(next.cited.documentId).not.toBe(first.cited.documentId);
      // A record that can change is cited anew every time.
      const open = ranked("a draft");
      work("alice", open);
      expect(work("alice", open).made[2]).toBe(1);
    } finally {
      hashes.mockRestore();
      hmacs.mockRestore();
    }
  });
});
