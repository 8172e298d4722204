// Attack: questions with quoted phrases as users paste them, sent to the IMAP connector (real
// Dovecot, Enron mailbox). A phrase keeps whatever it was pasted with: a line break (a phrase
// copied across two lines of a mail) or a NUL. imapflow cannot put CR, LF or NUL in an IMAP
// quoted string and throws: the whole mailbox is left out of the answer (a failed connector).
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { ImapConnector } from "../../src/connectors/imap/connector";
import { allowList, pinner } from "../../src/net/pin";
import { planQuery } from "../../src/retrieval/plan";
import { testServers } from "../support/servers";
import { imapConfig } from "../support/sources";

setDefaultTimeout(60_000);

const LOOPBACK = { pin: pinner(allowList("127.0.0.1")) };
let connector: ImapConnector;

beforeAll(async () => {
  connector = new ImapConnector(imapConfig((await testServers()).imap), LOOPBACK);
});

afterAll(async () => {
  await connector.close();
});

const ask = async (question: string) => {
  const { terms, phrases } = planQuery(question);
  return connector.search({ terms, phrases, limit: 5 });
};

describe("imap: a quoted phrase pasted with a line break", () => {
  test("control: the phrase on one line finds mail", async () => {
    expect((await ask('mails about "price caps"')).length).toBeGreaterThan(0);
  });

  test("the phrase across a line break (CRLF or LF) is searched, not a failed search", async () => {
    expect((await ask('mails about "price\r\ncaps"')).length).toBeGreaterThan(0);
    expect((await ask('mails about "price\ncaps"')).length).toBeGreaterThan(0);
  });

  test("a NUL inside a phrase is searched around, not a failed search", async () => {
    expect((await ask('mails about "price caps\u0000"')).length).toBeGreaterThan(0);
  });
});
