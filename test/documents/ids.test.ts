// Citation ids (D36): the same for the same record and text, new for a changed one, another
// user's key gives other ids, and nothing of the record is written in them.
import { describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { citeChunks } from "../../src/archive/answer";
import type { Archive } from "../../src/archive/store";
import { type SheetPlace, sheetRecords } from "../../src/connectors/files/sheets";
import { citationIds, parseOpenableId, sha256Hex } from "../../src/documents/ids";
import type { RankedChunk } from "../../src/retrieval/search";
import { testApp } from "../helpers";
import { wordsXlsx } from "../support/office";

const cited = {
  connectorId: "mail",
  recordId: "INBOX/cur/1700000000.M1P1.host:2,S",
  title: "Invoice 4711 from Orlen",
  content: "Total due: 1,234.56 PLN by 2024-03-01.",
  chunkText: "Total due: 1,234.56 PLN by 2024-03-01.",
};

describe("citation ids", () => {
  test("stable for unchanged content; a changed record or chunk gets new ones", () => {
    const key = randomBytes(32);
    const a = citationIds(key, cited);
    expect(citationIds(Buffer.from(key), { ...cited })).toEqual(a);
    expect(a.documentId).toMatch(/^doc_[0-9a-f]{32}$/);
    expect(a.chunkId).toMatch(/^[0-9a-f]{32}$/);
    expect(a.sha256).toBe(sha256Hex(cited.chunkText));
    const changed = citationIds(key, { ...cited, content: `${cited.content} Paid.` });
    expect(changed.documentId).not.toBe(a.documentId);
    expect(changed.chunkId).not.toBe(a.chunkId);
    const otherChunk = citationIds(key, { ...cited, chunkText: "Total due" });
    expect(otherChunk.documentId).toBe(a.documentId);
    expect(otherChunk.chunkId).not.toBe(a.chunkId);
    expect(citationIds(key, { ...cited, connectorId: "mail2" }).documentId).not.toBe(a.documentId);
  });

  test("another user's key gives other ids; no part of the record is in them", () => {
    const a = citationIds(randomBytes(32), cited);
    const b = citationIds(randomBytes(32), cited);
    expect(b.documentId).not.toBe(a.documentId);
    expect(b.chunkId).not.toBe(a.chunkId);
    for (const id of [a.documentId, a.chunkId]) for (const word of ["INBOX", "mail", "Orlen", "4711"]) expect(id).not.toContain(word);
  });

  test("ids as callers send them; anything else is no id", () => {
    const hex = "0123456789abcdef0123456789abcdef";
    expect(parseOpenableId(`doc_${hex}`)).toEqual({ document: `doc_${hex}` });
    expect(parseOpenableId(`chnk_${hex}`)).toEqual({ chunk: hex });
    expect(parseOpenableId(`chk_${hex}`)).toEqual({ chunk: hex });
    expect(parseOpenableId(hex)).toEqual({ chunk: hex });
    for (const bad of ["", "doc_", `doc_${hex}0`, `doc_${hex.toUpperCase()}`, "../etc/passwd", `chnk_${hex} `])
      expect(parseOpenableId(bad)).toBeUndefined();
  });
});

describe("a Maildir message read or flagged since", () => {
  /** A chunk of a mail as a maildir connector reads it from `place` (its path in the folder). */
  const mailAt = (place: string, type: "email" | "file" = "email") =>
    ({
      connectorId: "mail",
      record: {
        id: place,
        title: "Invoice 4711 from Orlen",
        content: "Total due: 1,234.56 PLN by 2024-03-01.",
        type,
        path: place,
        source_url: `file:///mail/${place}`,
        date: null,
        metadata: {},
      },
      text: "Total due: 1,234.56 PLN by 2024-03-01.",
    }) as unknown as RankedChunk;

  test("keeps its ids: moved from new/ to cur/, its flags written or changed (D36: unchanged content, the same ids)", async () => {
    const t = await testApp();
    try {
      const ids = (place: string) => {
        const [c] = citeChunks(t.services.archive, "alice", [mailAt(place)]);
        return { document: c!.documentId, chunk: c!.chunkId, record: c!.recordKey };
      };
      const arrived = ids("INBOX/new/1700000000.M1P1.host,S=1234");
      for (const later of [
        "INBOX/cur/1700000000.M1P1.host,S=1234:2,",
        "INBOX/cur/1700000000.M1P1.host,S=1234:2,S",
        "INBOX/cur/1700000000.M1P1.host,S=1234:2,FRS",
        "INBOX/cur/1700000000.M1P1.host,S=1234!2,S",
      ])
        expect(ids(later), later).toEqual(arrived);
      // A Maildir at the folder's root: the same.
      expect(ids("cur/1700000000.M1P1.host:2,S")).toEqual(ids("new/1700000000.M1P1.host"));
      // Another message, another folder: other ids.
      expect(ids("INBOX/cur/1700000001.M2P1.host:2,S").document).not.toBe(arrived.document);
      expect(ids("Archive/cur/1700000000.M1P1.host,S=1234:2,S").document).not.toBe(arrived.document);
      // A file of documents is no mail: its path is its id, whatever it looks like.
      expect(citeChunks(t.services.archive, "alice", [mailAt("notes/new/a.txt", "file")])[0]!.documentId).not.toBe(
        citeChunks(t.services.archive, "alice", [mailAt("notes/cur/a.txt", "file")])[0]!.documentId,
      );
    } finally {
      await t.services.close();
    }
  });
});

describe("a books transaction with another written above it", () => {
  /** A chunk of a beancount transaction as the books connector reads it at `line` of its file. */
  const transactionAt = (line: string, amount = "40.88") =>
    ({
      connectorId: "books",
      record: {
        id: `personal.beancount#L${line}`,
        title: "Cafe Mogador: Lunch",
        content: `2024-03-02 Cafe Mogador Lunch\n  Expenses:Food:Restaurant  ${amount} USD\n  Liabilities:Amex  -${amount} USD`,
        type: "file",
        path: `personal.beancount#L${line}`,
        source_url: `file:///books/personal.beancount#L${line}`,
        date: "2024-03-02T00:00:00.000Z",
        metadata: { book_format: "beancount", file: "personal.beancount", line: Number(line.split(".")[0]) },
      },
      text: `2024-03-02 Cafe Mogador Lunch Expenses:Food:Restaurant ${amount} USD`,
    }) as unknown as RankedChunk;

  test("keeps its ids on another line (D36: unchanged content, the same ids); a changed one gets new ones", async () => {
    const t = await testApp();
    try {
      const ids = (chunk: RankedChunk) => {
        const [c] = citeChunks(t.services.archive, "alice", [chunk]);
        return { document: c!.documentId, chunk: c!.chunkId, record: c!.recordKey };
      };
      const first = ids(transactionAt("38"));
      expect(ids(transactionAt("45"))).toEqual(first);
      expect(ids(transactionAt("45.2"))).toEqual(first);
      const changed = ids(transactionAt("38", "41.00"));
      expect(changed.document).not.toBe(first.document);
      expect(changed.record).not.toBe(first.record);
    } finally {
      await t.services.close();
    }
  });
});

describe("a spreadsheet row with another inserted above it", () => {
  const place: SheetPlace = {
    file: "sheets/costs.xlsx",
    url: "file:///srv/sheets/costs.xlsx",
    fileType: "xlsx",
    size: 1,
    modified: "2024-06-01T00:00:00.000Z",
  };
  const header = ["Item", "Amount", "Paid to"];
  /** Each row's ids (and its record's id) as the files kind reads the sheet and citeChunks cites it, by the row's cells. */
  const idsOf = async (archive: Archive, rows: string[][]) => {
    const records = await sheetRecords(wordsXlsx([header, ...rows]), place);
    return records.map((record) => {
      const [c] = citeChunks(archive, "alice", [{ connectorId: "files", record, text: record.content } as unknown as RankedChunk]);
      return { cells: record.content, row: record.id, ids: { document: c!.documentId, chunk: c!.chunkId, record: c!.recordKey } };
    });
  };

  test("keeps its ids (D36: unchanged content, the same ids); two rows of the same cells keep two sets; a changed row gets new ones", async () => {
    const t = await testApp();
    try {
      const rent = ["Rent", "1200", "Landlord"];
      const coffee = ["Coffee", "4.50", "Cafe"];
      const before = await idsOf(t.services.archive, [rent, coffee, coffee, ["Power", "80", "Utility"]]);
      const after = await idsOf(t.services.archive, [["Water", "30", "Utility"], rent, coffee, coffee, ["Power", "80", "Utility"]]);
      // Every row moved down one: its record's id (and link) says so, its ids do not change.
      expect(after.slice(1).map((r) => r.row)).toEqual(before.map((r) => r.row.replace(/\d+$/, (n) => String(Number(n) + 1))));
      expect(after.slice(1).map((r) => r.ids)).toEqual(before.map((r) => r.ids));
      // The two rows of the same cells: the same text quoted (one chunk hash), two documents.
      expect(before[1]!.cells).toBe(before[2]!.cells);
      expect(before[2]!.ids.document).not.toBe(before[1]!.ids.document);
      expect(new Set(before.map((r) => r.ids.document)).size).toBe(4);
      // A changed row: new ids; the rows around it keep theirs.
      const changed = await idsOf(t.services.archive, [rent, ["Coffee", "4.80", "Cafe"], coffee, ["Power", "80", "Utility"]]);
      expect(changed[1]!.ids.document).not.toBe(before[1]!.ids.document);
      expect(changed[0]!.ids).toEqual(before[0]!.ids);
      expect(changed[3]!.ids).toEqual(before[3]!.ids);
      // Another sheet or file of the same cells: other ids.
      const elsewhere = await sheetRecords(wordsXlsx([header, rent]), { ...place, file: "sheets/other.xlsx" });
      const [other] = citeChunks(t.services.archive, "alice", [
        { connectorId: "files", record: elsewhere[0], text: elsewhere[0]!.content } as unknown as RankedChunk,
      ]);
      expect(other!.documentId).not.toBe(before[0]!.ids.document);
    } finally {
      await t.services.close();
    }
  });
});
