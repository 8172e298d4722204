// Spreadsheets and office documents in the files kind (issue 38), end to end: a real server
// indexes a folder of them, hostile ones beside (a zip bomb, a billion laughs, a million empty
// rows, a 1 MB cell, a row repeated a billion times, cut files), all read in the reading worker
// (D31): GET / keeps answering, each hostile file is skipped with its reason in the status and
// the log, every row and document is a record, and the folder is untouched (D19; the strace
// proof is read-only.test.ts).
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { EXPANDS_TOO_FAR, MAX_RECORD_CHARS, MAX_SHEET_ROWS } from "../../src/connectors/files/limits";
import { DECLARES_ENTITIES } from "../../src/connectors/files/xml";
import { callerWith, cli, startCorpus, userFoldersEnv } from "../backup/support";
import { tempDir } from "../helpers";
import { fingerprint } from "../support/fixtures";
import { bigCellXlsx, emptyRowsXlsx, entitiesXlsx, OFFICE_FIXTURES, pptx, repeatedRowsOds, xlsxBomb } from "../support/office";
import { SERVED, servedWhileIndexing } from "../support/responsiveness";

setDefaultTimeout(240_000);

describe("a real server indexing a folder of spreadsheets and office documents, hostile ones beside", () => {
  test("GET / keeps answering; each hostile file is skipped with its reason; every row and document is a record; nothing is written", async () => {
    const root = tempDir();
    const docs = join(root, "alice", "docs");
    mkdirSync(docs, { recursive: true });
    for (const name of ["invoices.xlsx", "stock.ods", "agreement.odt"]) copyFileSync(join(OFFICE_FIXTURES, name), join(docs, name));
    const deck = await pptx();
    writeFileSync(join(docs, "deck.pptx"), deck);
    // Eight of each costly kind, so that the reading lasts long enough to be watched (each is
    // ~0.1-0.3 s of the reading worker's time, which the serving thread would spend in one turn).
    const reasons: Record<string, string> = {
      "laughs.xlsx": DECLARES_ENTITIES,
      "big-cell.xlsx": `has a row longer than ${MAX_RECORD_CHARS} characters`,
      "repeated.ods": `holds more than ${MAX_SHEET_ROWS} rows`,
      "cut.xlsx": "is not a readable XLSX file",
      "cut.pptx": "is not a readable PPTX file",
    };
    for (let n = 1; n <= 8; n++) {
      writeFileSync(join(docs, `bomb-${n}.xlsx`), xlsxBomb(600));
      reasons[`bomb-${n}.xlsx`] = EXPANDS_TOO_FAR;
      writeFileSync(join(docs, `empty-rows-${n}.xlsx`), emptyRowsXlsx(1_000_000));
      reasons[`empty-rows-${n}.xlsx`] = `holds more than ${MAX_SHEET_ROWS} rows`;
    }
    writeFileSync(join(docs, "laughs.xlsx"), entitiesXlsx());
    writeFileSync(join(docs, "big-cell.xlsx"), bigCellXlsx(MAX_RECORD_CHARS + 1));
    writeFileSync(join(docs, "repeated.ods"), repeatedRowsOds(1_000_000_000));
    const invoices = readFileSync(join(OFFICE_FIXTURES, "invoices.xlsx"));
    writeFileSync(join(docs, "cut.xlsx"), invoices.subarray(0, invoices.length - 200));
    writeFileSync(join(docs, "cut.pptx"), deck.subarray(0, deck.length / 2));
    const before = fingerprint(docs);
    const env = { ...userFoldersEnv(root), CORPUS_LOG_LEVEL: "INFO" };
    const scopes = "corpus:search,connectors:read,connectors:write";
    const token = (await cli(["token", "create", "--user", "alice", "--scopes", scopes], env)).stdout.trim();
    const server = await startCorpus(env);
    const call = callerWith(server.url, token);
    try {
      // Warmed up first: the first requests of a new process are slower for reasons of their own.
      for (let n = 0; n < 20; n++) await fetch(`${server.url}/`).then((r) => r.arrayBuffer());
      expect((await call("POST", "/v1/connectors", { id: "docs", kind: "files", config: { path: docs } })).status).toBe(200);
      expect(await servedWhileIndexing(server)).toMatchObject(SERVED);
      // Each hostile file once, with its reason; the log names no file.
      const logged = server.lines.filter((l) => l.message === "connector file skipped").map((l) => l.reason as string);
      expect(logged.sort()).toEqual(Object.values(reasons).sort());
      expect(JSON.stringify(server.lines)).not.toContain("laughs.xlsx");
      // 4 + 2 rows of invoices.xlsx, 3 of stock.ods, the ODT and the PPTX.
      expect(server.lines.find((l) => l.message === "connector indexed")).toMatchObject({ read: 4 });
      const { connectors } = (await (await call("GET", "/v1/connectors")).json()) as {
        connectors: Array<{ id: string; records?: number; reason?: string }>;
      };
      const status = connectors.find((c) => c.id === "docs")!;
      expect(status.records).toBe(11);
      expect(status.reason).toStartWith("skipped 21 files: ");
      for (const entry of status.reason!.slice("skipped 21 files: ".length).split("; ").slice(0, 3)) {
        const name = entry.slice(0, entry.indexOf(" "));
        expect(entry.slice(name.length + 1)).toBe(reasons[name]!);
      }
      // A row is found and cited at its sheet and row.
      const answer = (await (await call("POST", "/v1/query", { query: "Umbrella Pharma invoice", max_results: 3 })).json()) as {
        results: Array<{ path?: string; source_url?: string }>;
      };
      expect(JSON.stringify(answer)).toContain("invoices.xlsx#Invoices/5");
    } finally {
      await server.stop();
    }
    expect(fingerprint(docs)).toEqual(before);
  });
});
