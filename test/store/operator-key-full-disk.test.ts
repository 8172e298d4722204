// Attack on the operator's cache key made when its SQL connector starts (registry
// startEmbeddingAhead: keys.keyFor("*")): the first use of an operator SQL connector now writes
// to the database. On a full disk (D29) the read that first uses it, GET /v1/connectors, was
// refused with 507 (reads must go on there), and the connector, already live, never embedded its
// rows ahead once there was room again. Now the key is made by the embedding itself, and a try
// that failed is made again AHEAD_RETRY_MS later, when a question asks the connector. A real
// SQLITE_FULL on a small tmpfs (needs root).
import { expect, setDefaultTimeout, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { AHEAD_RETRY_MS } from "../../src/connectors/embed-ahead";
import { bearer, req, tempDir, testApp } from "../helpers";
import { chinookCustomers, chinookOperatorFile } from "../support/chinook";
import { fillDisk, isRoot, mountTmpfs, skipNotice } from "../support/tmpfs";

setDefaultTimeout(120_000);

skipNotice("operator-key-full-disk.test.ts");

test.skipIf(!isRoot)(
  "attack: on a full disk, listing connectors first starts the operator's SQL connector, whose key it cannot write: 507 for a read",
  async () => {
    const mnt = tempDir("corpus-full-operator-");
    const tmpfs = mountTmpfs(mnt, 16 * 1024 * 1024);
    try {
      let at = Date.now();
      const t = await testApp(
        {
          CORPUS_DATA_DIR: join(mnt, "data"),
          CORPUS_MIN_FREE_BYTES: "0",
          CORPUS_CONNECTORS_FILE: chinookOperatorFile([chinookCustomers()]),
        },
        () => at,
      );
      try {
        const token = (await t.services.auth.issuer.issue("alice", ["corpus:search", "connectors:read"] as never)).token;
        const list = () => t.app.handle(req("/v1/connectors", { headers: bearer(token) }));
        // An empty WAL on a full disk: any write must grow it, and cannot.
        t.db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
        fillDisk(join(mnt, "filler"));
        const first = await list();
        const firstStatus = first.status;
        await t.services.connectors.embeddedAhead();
        // Room again: once the try that failed may be made again, the shop's rows are embedded
        // ahead, as on a disk that was never full.
        rmSync(join(mnt, "filler"));
        at += AHEAD_RETRY_MS;
        expect((await list()).status).toBe(200);
        // The next question asks it again (a listing alone does not re-read a source).
        await t.services.connectors.active("alice");
        await t.services.connectors.embeddedAhead();
        await t.services.embeddings.idle();
        // Was { firstStatus: 507, operatorVectors: 0 }: the key's INSERT failed inside instance(),
        // after the connector was made live, so it is never embedded ahead in this process's life.
        expect({ firstStatus, operatorVectors: t.services.embeddings.rowsOf("*") > 0 }).toEqual({
          firstStatus: 200,
          operatorVectors: true,
        });
      } finally {
        await t.services.close();
      }
    } finally {
      tmpfs.unmount();
    }
  },
);
