// A POST pinned to a checked address (issue 13 item 5): the connection goes to the address,
// the name goes out as Host header and TLS server name, and the certificate is verified
// against the name; nobody resolves the name.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { postPinned } from "../../src/net/post";
import { tempDir } from "../helpers";
import { OPENSSL, selfSigned } from "../support/certificates";

describe("postPinned", () => {
  test("plain HTTP: to the pinned address, Host is the URL's, the name is never looked up", async () => {
    const seen: string[] = [];
    const server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: async (r) => (
        seen.push(`${r.headers.get("host")} ${new URL(r.url).pathname}${new URL(r.url).search} ${await r.text()}`),
        new Response("ok", { status: 202 })
      ),
    });
    try {
      // .invalid never resolves (RFC 6761): only the pinned address can be reached.
      const status = await postPinned(
        new URL(`http://receiver.invalid:${server.port}/in?x=1`),
        { address: "127.0.0.1", family: 4, name: "receiver.invalid" },
        { headers: {}, body: "hello", timeoutMs: 5000 },
      );
      expect(status).toBe(202);
      expect(seen).toEqual([`receiver.invalid:${server.port} /in?x=1 hello`]);
    } finally {
      server.stop(true);
    }
  });

  describe.skipIf(!OPENSSL)("HTTPS", () => {
    let cert: string;
    let key: string;
    let server: ReturnType<typeof Bun.serve>;
    const names: string[] = [];
    beforeAll(() => {
      ({ cert, key } = selfSigned(tempDir("corpus-tls-"), "receiver.invalid", ["DNS:receiver.invalid"]));
      server = Bun.serve({
        hostname: "127.0.0.1",
        port: 0,
        tls: { cert, key },
        fetch: (r) => (names.push(r.headers.get("host")!), new Response("ok")),
      });
    });
    afterAll(() => server?.stop(true));

    test("the certificate is verified against the name, not the address", async () => {
      const url = new URL(`https://receiver.invalid:${server.port}/in`);
      expect(
        await postPinned(
          url,
          { address: "127.0.0.1", family: 4, name: "receiver.invalid" },
          { headers: {}, body: "{}", timeoutMs: 5000, ca: cert },
        ),
      ).toBe(200);
      expect(names).toEqual([`receiver.invalid:${server.port}`]);
      // Another name at the same address: the certificate does not match, nothing is sent.
      const other = new URL(`https://other.invalid:${server.port}/in`);
      await expect(
        postPinned(
          other,
          { address: "127.0.0.1", family: 4, name: "other.invalid" },
          { headers: {}, body: "{}", timeoutMs: 5000, ca: cert },
        ),
      ).rejects.toThrow(/altnames|certificate/i);
      expect(names).toHaveLength(1);
    });
  });
});
