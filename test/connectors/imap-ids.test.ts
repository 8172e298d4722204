// Attack (D36: unchanged content, the same ids): a mailbox the IMAP server rebuilds (deleted and
// recreated with the same mails, as a move or a restore does) gets a new UIDVALIDITY and every
// mail a new UID. Against the real Dovecot (scripts/test-servers.sh), in a mailbox of this test's
// own; the connector keeps no index of a mailbox (each question searches it), so the next
// question reads the rebuilt mailbox, and its mails must be cited with the ids they had.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { ImapFlow } from "imapflow";
import { citeChunks } from "../../src/archive/answer";
import { ImapConnector } from "../../src/connectors/imap/connector";
import type { SourceRecord } from "../../src/connectors/types";
import { allowList, pinner } from "../../src/net/pin";
import { collapseCopies } from "../../src/retrieval/copies";
import type { RankedChunk } from "../../src/retrieval/search";
import { testApp } from "../helpers";
import { type TestServers, testServers } from "../support/servers";
import { imapConfig } from "../support/sources";

setDefaultTimeout(60_000);

const LOOPBACK = { pin: pinner(allowList("127.0.0.1")) };
const MAILBOX = `ids-${process.pid}`;
/** A mailbox of its own for the forged-Message-ID attack. */
const FORGED_MAILBOX = `ids-forged-${process.pid}`;
/** A mailbox of its own for the UID given to another mail. */
const REUSED_MAILBOX = `ids-reused-${process.pid}`;

/** A mail as a client would append it; `messageId` undefined: a mail without a Message-ID header. */
const mail = (n: number, messageId: string | undefined) =>
  [
    "From: Orlen Billing <billing@orlen.example>",
    "To: alice@example.com",
    `Subject: Invoice ${4700 + n}`,
    `Date: Mon, 0${n} Apr 2024 10:00:00 +0000`,
    ...(messageId ? [`Message-ID: ${messageId}`] : []),
    "Content-Type: text/plain; charset=utf-8",
    "",
    `Total due for invoice ${4700 + n}: ${n},234.56 PLN by 2024-05-01.`,
    "",
  ].join("\r\n");

const MAILS = [mail(1, "<inv-4701@orlen.example>"), mail(2, "<inv-4702@orlen.example>"), mail(3, undefined)];

let servers: TestServers;
let admin: ImapFlow;

/** The mailbox made anew with `mails` in that order (UIDs 1, 2, 3 ...); its UIDVALIDITY. */
async function rebuild(mails: string[], mailbox = MAILBOX): Promise<bigint> {
  if ((await admin.list()).some((m) => m.path === mailbox)) await admin.mailboxDelete(mailbox);
  await admin.mailboxCreate(mailbox);
  for (const m of mails) await admin.append(mailbox, m);
  const status = await admin.status(mailbox, { uidValidity: true });
  if (!status || status.uidValidity === undefined) throw new Error(`no UIDVALIDITY of ${mailbox}`);
  return status.uidValidity;
}

beforeAll(async () => {
  servers = await testServers();
  admin = new ImapFlow({
    host: servers.imap.host,
    port: servers.imap.port,
    secure: false,
    auth: { user: servers.imap.user, pass: servers.imap.password },
    logger: false,
  });
  await admin.connect();
});

afterAll(async () => {
  await admin.mailboxDelete(MAILBOX).catch(() => {});
  await admin.mailboxDelete(FORGED_MAILBOX).catch(() => {});
  await admin.mailboxDelete(REUSED_MAILBOX).catch(() => {});
  await admin.logout();
});

describe("imap: a mailbox rebuilt with a new UIDVALIDITY", () => {
  test("its mails keep their ids (the Message-ID's, not the UID's); a mail without a Message-ID is cited at its UID", async () => {
    const t = await testApp();
    const connector = new ImapConnector(imapConfig(servers.imap, MAILBOX), LOOPBACK);
    try {
      /** Each mail the connector reads, by its subject: its record's id and path, and the ids it is cited with. */
      const cited = async () => {
        const records: SourceRecord[] = await connector.search({ terms: [], phrases: [], limit: 10 });
        const chunks = records.map((record) => ({ connectorId: "mail-imap", record, text: record.content }) as unknown as RankedChunk);
        return new Map(
          citeChunks(t.services.archive, "alice", chunks).map(({ c, documentId, chunkId, recordKey }) => [
            c.record.title,
            { id: c.record.id, path: c.record.path, ids: { documentId, chunkId, recordKey } },
          ]),
        );
      };
      const before = await rebuild(MAILS);
      const first = await cited();
      expect([...first.keys()].sort()).toEqual(["Invoice 4701", "Invoice 4702", "Invoice 4703"]);
      expect(first.get("Invoice 4701")!.path).toBe(`${MAILBOX};UIDVALIDITY=${before}/;UID=1`);

      // Rebuilt in another order: a new UIDVALIDITY, each mail another UID. Dovecot ends the
      // session that had the mailbox open: the next question is answered all the same.
      const after = await rebuild([...MAILS].reverse());
      expect(after).not.toBe(before);
      const again = await cited();
      expect(again.get("Invoice 4701")!.path).toBe(`${MAILBOX};UIDVALIDITY=${after}/;UID=3`);
      for (const subject of ["Invoice 4701", "Invoice 4702"]) {
        expect(again.get(subject)!.ids, subject).toEqual(first.get(subject)!.ids);
        // The record's id: its mailbox and the sha256 of its Message-ID and text (no address spelled out).
        expect(again.get(subject)!.id).toMatch(new RegExp(`^${MAILBOX}/[0-9a-f]{64}$`));
      }
      // Without a Message-ID the UID is all there is: the mail is cited at it with the mailbox's UIDVALIDITY.
      expect(first.get("Invoice 4703")!.id).toBe(`${MAILBOX};UIDVALIDITY=${before}/;UID=3`);
      expect(again.get("Invoice 4703")!.id).toBe(`${MAILBOX};UIDVALIDITY=${after}/;UID=1`);
    } finally {
      await connector.close();
      await t.services.close();
    }
  });

  test("attack: a mailbox rebuilt gives a cited mail's UID to another mail: the old citation's id, link and record name the old UIDVALIDITY, never the new mail", async () => {
    // Two mails without a Message-ID: the UID (with the UIDVALIDITY, RFC 3501 2.3.1.1) is all
    // that names them. Keyed by the UID alone, the mail now at UID 1 was the same record as the
    // one cited there before (a "newer version" of it, evicting its archived copies), and the
    // link cited before opened it in a mail client.
    const t = await testApp();
    const connector = new ImapConnector(imapConfig(servers.imap, REUSED_MAILBOX), LOOPBACK);
    try {
      const read = async () => {
        const records = await connector.search({ terms: [], phrases: [], limit: 10 });
        const chunks = records.map((record) => ({ connectorId: "mail-imap", record, text: record.content }) as unknown as RankedChunk);
        return citeChunks(t.services.archive, "alice", chunks).map(({ c, recordKey, documentId }) => ({
          subject: c.record.title,
          id: c.record.id,
          url: c.record.source_url,
          recordKey,
          documentId,
        }));
      };
      const oldValidity = await rebuild([mail(5, undefined)], REUSED_MAILBOX);
      const [cited] = await read();
      expect(cited!.subject).toBe("Invoice 4705");
      expect(cited!.url).toEndWith(`/${REUSED_MAILBOX};UIDVALIDITY=${oldValidity}/;UID=1`);
      const newValidity = await rebuild([mail(6, undefined)], REUSED_MAILBOX);
      expect(newValidity).not.toBe(oldValidity);
      const [now] = await read();
      expect(now!.subject).toBe("Invoice 4706");
      expect(now!.url).toEndWith(`/${REUSED_MAILBOX};UIDVALIDITY=${newValidity}/;UID=1`);
      expect(now!.id).not.toBe(cited!.id);
      expect(now!.recordKey).not.toBe(cited!.recordKey);
      expect(now!.documentId).not.toBe(cited!.documentId);
    } finally {
      await connector.close();
      await t.services.close();
    }
  });

  test("attack: a forged mail under another mail's Message-ID is a record of its own, never the real one's copy", async () => {
    // A Message-ID is written by the sender: anyone may send a short mail under the ID of a real
    // one in the mailbox. Keyed by the Message-ID alone, both were one record id, and the ranking
    // took the real short mail for a copy of the forged one ranked above it (copies.ts): hidden.
    const real = mail(1, "<inv-4701@orlen.example>");
    const forged = real
      .replace("Total due for invoice 4701: 1,234.56 PLN by 2024-05-01.", "Paid, nothing due.")
      .replace("Orlen Billing <billing@orlen.example>", "Mallory <m@evil.example>");
    const shortReal = real.replace(/Total due[^\r]*/, "Due: 1,234.56 PLN.");
    await rebuild([shortReal, forged], FORGED_MAILBOX);
    const connector = new ImapConnector(imapConfig(servers.imap, FORGED_MAILBOX), LOOPBACK);
    try {
      const records = await connector.search({ terms: [], phrases: [], limit: 10 });
      expect(records.map((r) => r.content.trim()).sort()).toEqual(["Due: 1,234.56 PLN.", "Paid, nothing due."]);
      expect(new Set(records.map((r) => r.id)).size).toBe(2);
      const ranked = records.map(
        (record, i) =>
          ({
            connectorId: "mail-imap",
            owner: "alice",
            record,
            chunkIndex: 0,
            text: "",
            score: 2 - i,
            lexical: 0,
          }) as unknown as RankedChunk,
      );
      expect(collapseCopies(ranked).length).toBe(2);
    } finally {
      await connector.close();
    }
  });
});
