// The kinds table (issue 15 item 2): every kind is one record, and what the API, the registry
// and the panel know of kinds comes from it.
import { describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { changedConfig, publicConfig, validateConfig } from "../../src/connectors/definition";
import { ConfigMismatch, type KindContext } from "../../src/connectors/kind";
import { CONNECTOR_KINDS, isConnectorKind, KINDS } from "../../src/connectors/kinds";
import { CreateConnectorBody } from "../../src/connectors/model";
import { connectorsWidget } from "../../src/mcp/widget";

const imapConfig = { host: "imap.example.com", port: 993, secure: true, user: "ann", password: "s3cret-pw", mailbox: "INBOX" };
const sqlConfig = {
  url: "postgres://reader:s3cret-pw@db.example.com:5432/shop",
  tables: [{ name: "invoice", id: "invoice_id", title: "customer", text: ["total"] }],
};

describe("the kinds table", () => {
  test("the API's kind enum and the panel's form list exactly the table's kinds, each with its fields", () => {
    expect(Value.Check(CreateConnectorBody.properties.kind, "sql")).toBe(true);
    expect(Value.Check(CreateConnectorBody.properties.kind, "ftp")).toBe(false);
    for (const kind of CONNECTOR_KINDS) expect(Value.Check(CreateConnectorBody.properties.kind, kind)).toBe(true);
    const page = connectorsWidget();
    const options = [...page.matchAll(/<option value="([^"]+)">/g)].map((m) => m[1]);
    expect(options).toEqual([...CONNECTOR_KINDS]);
    for (const kind of CONNECTOR_KINDS)
      for (const field of KINDS[kind].form) {
        // A form field fills a config field of its kind, and the page has its input, shown for that kind.
        expect(Object.keys(KINDS[kind].schema.properties)).toContain(field.name);
        const shownFor = page.match(new RegExp(`data-kind="([^"]*)"[^>]*><label for="f-${field.name}">`))?.[1]?.split(" ");
        expect(shownFor).toContain(kind);
      }
    expect(isConnectorKind("maildir")).toBe(true);
    expect(isConnectorKind("toString")).toBe(false);
  });

  test("a config is checked against its kind's schema, defaults applied, the field at fault named", () => {
    const { port: _port, mailbox: _mailbox, ...bare } = imapConfig;
    expect(validateConfig("imap", bare, "config")).toEqual({ ...bare, port: 993, mailbox: "INBOX" });
    expect(() => validateConfig("imap", { ...imapConfig, port: 0 }, "config")).toThrow(
      "config.port: expected integer to be greater or equal to 1",
    );
    expect(() => validateConfig("files", { path: "/srv", extra: 1 }, "config")).toThrow("config.extra");
    // A host is read as it is at connect time: one name or address.
    expect(() => validateConfig("imap", { ...imapConfig, host: "imap.example.com:993" }, "config")).toThrow("config.host");
  });

  test("what is shown of a config holds no secret, for every kind that has one", () => {
    expect(JSON.stringify(publicConfig("imap", imapConfig))).not.toContain("s3cret-pw");
    expect(JSON.stringify(publicConfig("sql", sqlConfig))).not.toContain("s3cret-pw");
    expect(publicConfig("files", { path: "/srv/docs" })).toEqual({ path: "/srv/docs" });
  });

  test("a change keeps a secret only where it went before", () => {
    const imap = { owner: "ann", id: "mail", kind: "imap" as const, label: "Mail", config: imapConfig };
    expect(changedConfig(imap, { mailbox: "Archive" }).password).toBe("s3cret-pw");
    expect(() => changedConfig(imap, { host: "evil.example.net" })).toThrow("config.password: give the password again to change host");
    expect(changedConfig(imap, { host: "new.example.com", password: "other" }).password).toBe("other");
    const sql = { owner: "ann", id: "shop", kind: "sql" as const, label: "Shop", config: sqlConfig };
    expect(changedConfig(sql, { url: "postgres://reader:***@db.example.com:5432/shop" }).url).toBe(sqlConfig.url);
    // The shown URL pointed at another server is not given the stored password, nor stored with *** as one (issue 35 item 7).
    expect(() => changedConfig(sql, { url: "postgres://reader:***@evil.example.net:5432/shop" })).toThrow(
      "config.url: give the password again to change the URL",
    );
    expect(changedConfig(sql, { url: "postgres://reader:typed@evil.example.net:5432/shop" }).url).toBe(
      "postgres://reader:typed@evil.example.net:5432/shop",
    );
  });

  test("local paths and remote hosts come from the record", () => {
    expect(KINDS.maildir.localPath({ path: "/m" })).toBe("path");
    expect(KINDS.sql.localPath({ ...sqlConfig, url: "/srv/shop.db" })).toBe("url");
    expect(KINDS.sql.localPath(sqlConfig)).toBeUndefined();
    expect(KINDS.sql.remoteHost(sqlConfig)).toEqual({ host: "db.example.com", field: "config.url" });
    expect(KINDS.imap.remoteHost(imapConfig)).toEqual({ host: "imap.example.com", field: "config.host" });
    expect(KINDS.files.remoteHost({ path: "/d" })).toBeUndefined();
    expect(CONNECTOR_KINDS.filter((k) => KINDS[k].indexedLocally)).toEqual(["maildir", "files", "books"]);
    expect(CONNECTOR_KINDS.filter((k) => KINDS[k].datesAreFileTimes)).toEqual(["files"]);
  });

  test("a stored config that no longer fits its kind is refused before any connector is made from it", () => {
    const context = {} as KindContext;
    expect(() => KINDS.imap.create({ host: "h" }, context)).toThrow(ConfigMismatch);
    expect(() => KINDS.sql.redact({ url: 42 })).toThrow(ConfigMismatch);
  });
});
