// The base of a citation's link (D36, D4): the public URL when configured; else the address
// bound, and for a wildcard host the origin reached, from a Host header that is a host[:port]
// and nothing else. (test/documents/citation-links.test.ts follows the links on real listeners.)
import { describe, expect, test } from "bun:test";
import { publicUrlOf, reachedHost } from "../../src/http/public-url";
import { RequestInfo } from "../../src/http/request-context";
import { testConfig } from "../helpers";

/** A request as the listener hands it over: its URL carries the Host header too. */
function reached(host: string | undefined, boundPort?: number) {
  const request = new Request("http://127.0.0.1:1/v1/query", { headers: host === undefined ? {} : { host } });
  if (host === undefined) request.headers.delete("host");
  const info = new RequestInfo(request);
  info.boundPort = boundPort;
  return { request, info };
}

describe("reachedHost: a host[:port] or nothing", () => {
  test("names and addresses, with or without a port, lower case", () => {
    expect(reachedHost(reached("Corpus.Internal:8443").request)).toBe("corpus.internal:8443");
    expect(reachedHost(reached("localhost").request)).toBe("localhost");
    expect(reachedHost(reached("[fd00::5]:9000").request)).toBe("[fd00::5]:9000");
  });

  test("anything else is not taken: user info, paths, quotes, markup, bad ports, wildcards", () => {
    for (const host of [
      "evil.example@corpus.internal",
      "corpus.internal/x",
      "corpus.internal:80/../",
      'corpus.internal"><script>',
      "corpus.internal:99999",
      "corpus.internal:0",
      "corpus.internal:",
      "0.0.0.0:8080",
      "[::]:8080",
      "a b",
    ])
      expect({ host, taken: reachedHost(reached(host).request) }).toEqual({ host, taken: undefined });
  });
});

describe("publicUrlOf", () => {
  test("a fixed host: its address with the port actually bound (CORPUS_PORT=0 is never written)", () => {
    const config = testConfig({ CORPUS_HOST: "127.0.0.1", CORPUS_PORT: "0" });
    const { request, info } = reached("localhost:41234", 41234);
    expect(publicUrlOf(config, request, info)).toBe("http://127.0.0.1:41234");
    const v6 = testConfig({ CORPUS_HOST: "::1", CORPUS_PORT: "0" });
    expect(publicUrlOf(v6, request, info)).toBe("http://[::1]:41234");
  });

  test("a wildcard host: the origin reached; without a usable Host, loopback with the bound port", () => {
    const config = testConfig({ CORPUS_HOST: "0.0.0.0", CORPUS_PORT: "8080" });
    expect(publicUrlOf(config, reached("corpus.lan:9000", 8080).request, reached("corpus.lan:9000", 8080).info)).toBe(
      "http://corpus.lan:9000",
    );
    const hostile = reached("evil.example@corpus.lan/x", 8080);
    expect(publicUrlOf(config, hostile.request, hostile.info)).toBe("http://127.0.0.1:8080");
    const wildcard = reached("0.0.0.0:8080", 8080);
    expect(publicUrlOf(config, wildcard.request, wildcard.info)).toBe("http://127.0.0.1:8080");
    const v6 = testConfig({ CORPUS_HOST: "::", CORPUS_PORT: "8080" });
    expect(publicUrlOf(v6, wildcard.request, wildcard.info)).toBe("http://[::1]:8080");
  });

  test("https when serving TLS", () => {
    const config = testConfig({ CORPUS_HOST: "0.0.0.0", CORPUS_TLS_CERT_FILE: "/x.pem", CORPUS_TLS_KEY_FILE: "/x.key" });
    const { request, info } = reached("corpus.lan:8443", 8443);
    expect(publicUrlOf(config, request, info)).toBe("https://corpus.lan:8443");
  });

  test("CORPUS_OAUTH_RESOURCE_URL set: the one truth, whatever the Host or the port", () => {
    const config = testConfig({ CORPUS_HOST: "0.0.0.0", CORPUS_PORT: "0", CORPUS_OAUTH_RESOURCE_URL: "https://corpus.example.com/" });
    const { request, info } = reached("corpus.lan:9000", 41234);
    expect(publicUrlOf(config, request, info)).toBe("https://corpus.example.com");
  });
});
