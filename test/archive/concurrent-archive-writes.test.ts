// Concurrent questions of one user on one node over the shared PostgreSQL (D33, issue 37): twenty
// answers archived at once that cite the same documents, each in its own order (as ranking orders
// them), must all be kept: no answer of the user fails with a deadlock of the archive's inserts.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { ARCHIVE_TABLES, PostgresArchiveRows } from "../../src/archive/rows-postgres";
import { type SharedDatabase, sharedDatabase } from "../support/shared-database";

setDefaultTimeout(120_000);

const USER = "bench";
const WRITERS = 20;
const DOCUMENTS = 12;

let shared: SharedDatabase;
beforeAll(async () => {
  shared = await sharedDatabase();
});
afterAll(() => shared?.drop());

/** The documents 0 … DOCUMENTS-1 in the order writer `w` cites them (a rotation, reversed every other writer). */
function citedBy(w: number): number[] {
  const rotated = Array.from({ length: DOCUMENTS }, (_, i) => (i + w) % DOCUMENTS);
  return w % 2 ? rotated.reverse() : rotated;
}

test("twenty answers citing the same documents in different orders are all archived, each document kept once", async () => {
  // The same node's pool (and another node's), as a node's concurrent questions share it.
  const nodes = [new PostgresArchiveRows(shared.sql), new PostgresArchiveRows(shared.client())];
  for (let round = 0; round < 3; round++) {
    const outcomes = await Promise.allSettled(
      Array.from({ length: WRITERS }, (_, w) =>
        nodes[w % 2]!.write({
          user: USER,
          queryId: `q-${round}-${w}`,
          at: 1_700_000_000 + round,
          question: new Uint8Array([w]),
          chunks: [{ chunkId: `c-${w}`, body: new Uint8Array([1, 2, 3]) }],
          documents: citedBy(w).map((d) => ({
            docId: `doc-${round}-${d}`,
            body: new Uint8Array([d]),
            recordKey: `record-${round}-${d % 4}`,
          })),
        }),
      ),
    );
    const failed = outcomes.flatMap((o) => (o.status === "rejected" ? [String((o.reason as { code?: string }).code ?? o.reason)] : []));
    expect({ round, failed }).toEqual({ round, failed: [] });
  }
  const [counted] = await shared.sql<{ queries: string; documents: string }[]>`SELECT
    (SELECT count(*) FROM ${shared.sql(ARCHIVE_TABLES.queries)} WHERE user_id = ${USER}) AS queries,
    (SELECT count(*) FROM ${shared.sql(ARCHIVE_TABLES.documents)} WHERE user_id = ${USER}) AS documents`;
  expect({ queries: Number(counted!.queries), documents: Number(counted!.documents) }).toEqual({
    queries: 3 * WRITERS,
    documents: 3 * DOCUMENTS,
  });
});
