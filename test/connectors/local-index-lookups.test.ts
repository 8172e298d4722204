// What a search looks up of the records and chunks it finds is read from indexes that hold it
// (connectors-013, -014), never from the rows that hold sealed records and chunk texts (a page
// read each): SQLite's query plans of the search's statements, with and without a date range.
import { expect, test } from "bun:test";
import { EMBEDDED_CHUNKS_SQL, wordHitsSql } from "../../src/connectors/local-index/candidates";
import { localIndexes, mailRecord } from "../support/local-index";

async function notes() {
  const { db, indexFor, keysFor } = localIndexes();
  const index = indexFor("notes");
  for (const id of ["a", "b", "c"])
    await index.put({ source: id, size: 1, mtime: 1 }, [mailRecord(id, "2020-01-01T00:00:00.000Z", `harbour ${id}`)]);
  return { db, ix: { db, owner: index.owner }, keys: keysFor("notes") };
}

test("a word's hits are looked up in connector_docs_by_doc, not in the rows of sealed records, whole or in a range of rows", async () => {
  const { db, ix, keys } = await notes();
  for (const ranged of [false, true]) {
    const plan = db
      .query<{ detail: string }, Array<string | number>>(`EXPLAIN QUERY PLAN ${wordHitsSql(ranged)}`)
      .all(ix.owner, keys.blinder.match(["harbour"])!, ...(ranged ? [1, 3] : []))
      .map((r) => r.detail);
    expect(plan).toContain("SEARCH d USING COVERING INDEX connector_docs_by_doc (doc=?) LEFT-JOIN");
    expect(plan.filter((p) => p.startsWith("SEARCH d "))).toHaveLength(1);
  }
});

test("the embedded chunks of the records found are read from connector_chunks_doc alone, not the rows of their texts", async () => {
  const { db } = await notes();
  const plan = db
    .query<{ detail: string }, [string]>(`EXPLAIN QUERY PLAN ${EMBEDDED_CHUNKS_SQL}`)
    .all("[1,2]")
    .map((r) => r.detail);
  expect(plan).toContain("SEARCH connector_chunks USING COVERING INDEX connector_chunks_doc (doc=? AND embedded=?)");
});
