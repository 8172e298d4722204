import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createMaildirConnector, parseMessage, splitMbox } from "../../src/connectors/maildir/connector";
import { tempDir } from "../helpers";
import { fingerprint } from "../support/fixtures";
import { ask, folderIndexStores, localIndexes } from "../support/local-index";
import { SHARED_DATA } from "../support/servers";
import { storeSuite } from "../support/shared-database";

// Servers, builds and the model take longer than 5 s on a busy two-core machine.
setDefaultTimeout(60_000);

const enron = join(SHARED_DATA, "enron");
const { db, indexFor: embeddedIndexFor } = localIndexes();
const before = fingerprint(enron);

afterAll(() => {
  // D19: not a byte nor an mtime of the source changed.
  expect(fingerprint(enron)).toEqual(before);
});

describe("maildir connector: the Enron messages folder (.eml)", () => {
  const connector = createMaildirConnector(join(enron, "messages"), embeddedIndexFor("t/eml"));

  test("indexes every message; health reports the count", async () => {
    await connector.sync();
    expect(await connector.health()).toEqual({ status: "ok", records: 1702 });
  });

  test("finds the mails that answer a realistic question, with dates and metadata right", async () => {
    const records = await connector.search(ask(["california", "price", "caps"]));
    expect(records.length).toBe(10);
    const text = records.map((r) => `${r.title} ${r.content}`.toLowerCase()).join("\n");
    expect(text).toContain("california");
    const r = records[0]!;
    expect(r.type).toBe("email");
    expect(r.source_url).toStartWith("file://");
    expect(r.path).toEndWith(".eml");
    // The record agrees with the message file itself.
    const raw = readFileSync(join(enron, "messages", r.path), "latin1");
    const messageId = /^Message-ID:\s*(.+)$/im.exec(raw)![1]!.trim();
    expect(r.metadata.message_id).toBe(messageId);
    const dateHeader = /^Date:\s*(.+)$/im.exec(raw)![1]!.trim();
    expect(r.date).toBe(new Date(dateHeader).toISOString());
    expect(String(r.metadata.from)).toContain("@");
  });

  test("a phrase and a date range narrow the results", async () => {
    const may = await connector.search(
      ask([], { phrases: ["price caps"], dateFrom: new Date("2001-05-01T00:00:00Z"), dateTo: new Date("2001-06-01T00:00:00Z"), limit: 50 }),
    );
    expect(may.length).toBeGreaterThan(0);
    for (const r of may) {
      expect(r.date! >= "2001-05-01").toBe(true);
      expect(r.date! < "2001-06-01").toBe(true);
      expect(`${r.title} ${r.content}`.toLowerCase()).toMatch(/price caps?/);
    }
  });

  test("the records are sealed in the index: no message text in the database", async () => {
    const rows = db.query<{ record: Uint8Array }, []>("SELECT record FROM connector_docs LIMIT 50").all();
    for (const r of rows) expect(Buffer.from(r.record).includes(Buffer.from("Subject"))).toBe(false);
  });
});

// The mbox and Maildir behaviours over each store of the index (D33: one suite, two stores).
for (const [name, open] of folderIndexStores())
  storeSuite(`maildir connector, its index ${name}`, open, (store) => {
    const indexFor = (key: string) => store().indexFor(key);
    describe("maildir connector: mbox and Maildir folders", () => {
      test("the mbox file holds the same 1702 messages; an mbox is indexed message by message", async () => {
        const mbox = readFileSync(join(enron, "enron.mbox"), "latin1");
        expect(splitMbox(mbox).length).toBe(1702);
        // Its first 200 messages as a file of their own: each message is parsed as its .eml twin is
        // above (all 1702 of them), so indexing all of the mbox again would test the same lines.
        const dir = tempDir();
        const firstLines = mbox.split("\n");
        const starts = firstLines.flatMap((line, i) => (line.startsWith("From ") ? [i] : []));
        writeFileSync(join(dir, "enron.mbox"), firstLines.slice(0, starts[200]).join("\n"), "latin1");
        const c = createMaildirConnector(dir, indexFor("t/mbox"));
        await c.sync();
        expect((await c.health()).records).toBe(200);
        const [hit] = await c.search(ask(["enron"], { limit: 1 }));
        expect(hit!.path).toMatch(/^enron\.mbox#\d+$/);
      });

      test("a Maildir: cur/ and new/ read, tmp/ ignored; changes picked up incrementally", async () => {
        const dir = tempDir();
        for (const sub of ["cur", "new", "tmp"]) mkdirSync(join(dir, "Maildir", sub), { recursive: true });
        const files = readdirSync(join(enron, "messages")).slice(0, 5);
        files.slice(0, 3).forEach((f, i) => cpSync(join(enron, "messages", f), join(dir, "Maildir", "cur", `${i}.host:2,S`)));
        cpSync(join(enron, "messages", files[3]!), join(dir, "Maildir", "new", "3.host"));
        cpSync(join(enron, "messages", files[4]!), join(dir, "Maildir", "tmp", "4.host"));
        const c = createMaildirConnector(dir, indexFor("t/maildir"));
        await c.sync();
        expect((await c.health()).records).toBe(4);

        const marker = `zebracorn${Date.now()}`;
        writeFileSync(
          join(dir, "Maildir", "new", "5.host"),
          `From: a@example.com\r\nTo: b@example.com\r\nSubject: Quarterly ${marker}\r\nDate: Mon, 2 Apr 2001 10:00:00 -0700\r\nMessage-ID: <x@example.com>\r\n\r\nThe ${marker} report.\r\n`,
        );
        rmSync(join(dir, "Maildir", "cur", "0.host:2,S"));
        await c.sync();
        expect((await c.health()).records).toBe(4);
        const [found] = await c.search(ask([marker]));
        expect(found!.title).toBe(`Quarterly ${marker}`);
        expect(found!.date).toBe("2001-04-02T17:00:00.000Z");
      });

      test("charsets, HTML-only bodies and attachment names are decoded", async () => {
        const raw = [
          "From: =?UTF-8?B?SsO8cmdlbg==?= <j@example.de>",
          "To: b@example.com",
          "Subject: =?ISO-8859-1?Q?Rechnung_f=FCr_M=E4rz?=",
          "Date: Tue, 3 Apr 2001 10:00:00 +0200",
          "MIME-Version: 1.0",
          'Content-Type: multipart/mixed; boundary="b"',
          "",
          "--b",
          "Content-Type: text/html; charset=iso-8859-1",
          "Content-Transfer-Encoding: quoted-printable",
          "",
          "<p>Gr=FC=DFe, <b>1.250,00 EUR</b></p>",
          "--b",
          'Content-Type: application/pdf; name="rechnung-1042.pdf"',
          'Content-Disposition: attachment; filename="rechnung-1042.pdf"',
          "Content-Transfer-Encoding: base64",
          "",
          "JVBERi0xLjQK",
          "--b--",
          "",
        ].join("\r\n");
        const r = await parseMessage(Buffer.from(raw), "m1", "m1", "file:///m1");
        expect(r.title).toBe("Rechnung für März");
        expect(r.content).toContain("Grüße");
        expect(r.content).toContain("1.250,00 EUR");
        expect(r.metadata.attachments).toBe("rechnung-1042.pdf");
        expect(r.metadata.from).toBe("j@example.de");
      });

      test("a folder that does not exist is status error with the reason, not a crash", async () => {
        const c = createMaildirConnector("/nonexistent/mail", indexFor("t/missing"));
        await c.sync();
        expect(await c.health()).toEqual({ status: "error", reason: "/nonexistent/mail is not a readable folder" });
        await expect(c.search(ask(["x"]))).rejects.toThrow("not a readable folder");
      });
    });
  });
