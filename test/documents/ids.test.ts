// Citation ids (D36): the same for the same record and text, new for a changed one, another
// user's key gives other ids, and nothing of the record is written in them.
import { describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { citationIds, parseOpenableId, sha256Hex } from "../../src/documents/ids";

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
