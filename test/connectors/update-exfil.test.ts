// Attack (this session's report, high): PATCH an IMAP connector's port while leaving the password
// out. The stored password was kept, and corpus logged in to the new server with it: whoever
// holds connectors:write (the panel token too) could learn a password it never saw (D20). Now a
// new host, port, TLS setting or user needs the password again; given again, it goes there.
import { expect, setDefaultTimeout, test } from "bun:test";
import { createServer } from "node:net";
import { bearer, patchJson, postJson, req, testApp } from "../helpers";
import { until } from "../support/wait";

setDefaultTimeout(30_000);

function listener(greet: boolean) {
  const seen: string[] = [];
  const server = createServer((s) => {
    if (greet) s.write("* OK fake\r\n");
    s.on("data", (b) => {
      const text = b.toString();
      seen.push(text);
      for (const line of text.split("\r\n")) {
        const tag = line.split(" ")[0];
        if (!tag) continue;
        if (/CAPABILITY/i.test(line)) s.write(`* CAPABILITY IMAP4rev1 AUTH=PLAIN\r\n${tag} OK done\r\n`);
        else if (/AUTHENTICATE/i.test(line)) s.write("+ \r\n");
        else if (/^[A-Za-z0-9+/=]+$/.test(line)) {
          seen.push(Buffer.from(line, "base64").toString());
          s.write("* BYE\r\n");
        } else s.write(`${tag} NO nope\r\n`);
      }
    });
  });
  return new Promise<{ port: number; seen: string[]; close: () => void }>((res) =>
    server.listen(0, "127.0.0.1", () => res({ port: (server.address() as any).port, seen, close: () => server.close() })),
  );
}

test("a stored IMAP password is never sent to a server the PATCH names; given again, it is", async () => {
  const real = await listener(true);
  const evil = await listener(true);
  const t = await testApp({ CORPUS_CONNECTOR_ALLOW_HOSTS: "127.0.0.1" });
  const tok = (await t.services.auth.issuer.issue("alice", ["connectors:read", "connectors:write"])).token;
  const imap = { host: "127.0.0.1", port: real.port, secure: false, user: "alice", password: "S3CRET-PW-xyz", mailbox: "INBOX" };
  await t.app.handle(postJson("/v1/connectors", { id: "mail", kind: "imap", config: imap }, bearer(tok)));
  const patch = (config: unknown) => t.app.handle(patchJson("/v1/connectors/mail", { config }, bearer(tok)));
  const refused = await patch({ port: evil.port });
  expect(refused.status).toBe(400);
  expect(evil.seen).toEqual([]);
  // The same change with the password: corpus logs in there (the fake server sees it), so the check above could fail.
  expect((await patch({ port: evil.port, password: "typed-again" })).status).toBe(200);
  expect(evil.seen.join("")).toContain("typed-again");
  expect(evil.seen.join("")).not.toContain("S3CRET-PW-xyz");
  real.close();
  evil.close();
  await t.services.close();
});

// Issue 35 item 7: a SQL connector's URL sent back as shown (password ***) but naming another
// server was stored with `***` as its password. Now, as for IMAP, the password is needed again.
/** A PostgreSQL port that records the client's first message (its startup: user and database) and hangs up. */
function startupRecorder() {
  const seen: string[] = [];
  const server = createServer((s) => {
    s.on("error", () => {});
    s.on("data", (b) => {
      seen.push(b.toString("latin1"));
      s.destroy();
    });
  });
  return new Promise<{ port: number; seen: string[]; close: () => void }>((res) =>
    server.listen(0, "127.0.0.1", () => res({ port: (server.address() as any).port, seen, close: () => server.close() })),
  );
}

test("a SQL URL sent back as shown (***) for another server is 400; the stored URL stays; given again, it goes there", async () => {
  const real = await startupRecorder();
  const evil = await startupRecorder();
  const t = await testApp({ CORPUS_CONNECTOR_ALLOW_HOSTS: "127.0.0.1" });
  const tok = (await t.services.auth.issuer.issue("alice", ["connectors:read", "connectors:write"])).token;
  const url = `postgres://reader:S3CRET-PW-xyz@127.0.0.1:${real.port}/shop?sslmode=disable`;
  const tables = [{ name: "invoice", id: "invoice_id", title: "customer", text: ["customer"] }];
  expect((await t.app.handle(postJson("/v1/connectors", { id: "shop", kind: "sql", config: { url, tables } }, bearer(tok)))).status).toBe(
    200,
  );
  const shown = async () =>
    ((await (await t.app.handle(req("/v1/connectors", { headers: bearer(tok) }))).json()) as any).connectors.find(
      (c: any) => c.id === "shop",
    ).config.url as string;
  const before = await shown();
  expect(before).toBe(`postgres://reader:***@127.0.0.1:${real.port}/shop?sslmode=disable`);
  const patch = (config: unknown) => t.app.handle(patchJson("/v1/connectors/shop", { config }, bearer(tok)));
  for (const moved of [
    before.replace(`:${real.port}/`, `:${evil.port}/`),
    before.replace("reader:", "admin:"),
    before.replace("/shop?", "/other?"),
    before.replace("sslmode=disable", "sslmode=allow"),
    // The placeholder percent-encoded is the placeholder still (the URL's password is decoded).
    before.replace(":***@", ":%2A%2A%2A@").replace(`:${real.port}/`, `:${evil.port}/`),
  ]) {
    const refused = await patch({ url: moved });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { message: string }).message).toStartWith("config.url: give the password again to change the URL");
  }
  expect(evil.seen).toEqual([]);
  expect(await shown()).toBe(before);
  // Sent back unchanged, the stored password is kept (the connector is not even read again).
  expect((await patch({ url: before })).status).toBe(200);
  expect(await shown()).toBe(before);
  // With the password given, the new server is used: the fake sees the connection, so the check above could fail.
  expect((await patch({ url: `postgres://reader:typed-again@127.0.0.1:${evil.port}/shop?sslmode=disable` })).status).toBe(200);
  await until("the new server reached", async () => (evil.seen.join("").includes("reader") ? true : undefined), 10_000);
  expect(await shown()).toBe(`postgres://reader:***@127.0.0.1:${evil.port}/shop?sslmode=disable`);
  real.close();
  evil.close();
  await t.services.close();
});
