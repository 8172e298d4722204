import { describe, expect, test } from "bun:test";
import { ConfigError, describeConfig, loadConfig, ownUrls } from "../src/config";

describe("config (D1, second document part 8)", () => {
  test("embedded defaults", () => {
    const c = loadConfig({});
    expect(c.CORPUS_HOST).toBe("127.0.0.1");
    expect(c.CORPUS_PORT).toBe(8080);
    expect(c.CORPUS_DATA_DIR).toBe("./corpus-data");
    expect(c.CORPUS_LOG_LEVEL).toBe("INFO");
    expect(c.CORPUS_DEBUG_MODE).toBe(false);
    expect(c.CORPUS_RATE_LIMIT_REQUESTS_PER_MINUTE).toBe(60);
    expect(c.CORPUS_MAX_REQUEST_SIZE).toBe(2_097_152);
    expect(c.CORPUS_REQUEST_TIMEOUT).toBe(30);
    expect(c.CORPUS_LIMIT_QUERY_PER_MINUTE).toBe(60);
    expect(c.CORPUS_LIMIT_QUERY_PER_DAY).toBe(6000);
    expect(c.CORPUS_LIMIT_DEEP_SEARCH_PER_MINUTE).toBe(30);
    expect(c.CORPUS_LIMIT_DEEP_SEARCH_PER_DAY).toBe(3000);
    expect(c.CORPUS_LIMIT_DELETE_PER_MINUTE).toBe(10);
    expect(c.CORPUS_LIMIT_DELETE_PER_DAY).toBe(100);
    expect(c.CORPUS_AUTH_DISABLED).toBe(false);
    expect(c.CORPUS_MIN_FREE_BYTES).toBe(256 * 1024 * 1024);
    expect(c.corsOrigins).toEqual([]);
    expect(c.resourceUrl).toBe("http://127.0.0.1:8080");
    expect(c.issuer).toBe("http://127.0.0.1:8080");
  });

  test("values are converted and resolved", () => {
    const c = loadConfig({
      CORPUS_PORT: "9000",
      CORPUS_DEBUG_MODE: "true",
      CORPUS_LOG_LEVEL: "warning",
      CORPUS_CORS_ALLOW_ORIGINS_CSV: "https://a.example.com, http://b.example:3000",
      CORPUS_OAUTH_RESOURCE_URL: "https://corpus.example.com/",
      CORPUS_HOST: "::1",
    });
    expect(c.CORPUS_PORT).toBe(9000);
    expect(c.CORPUS_DEBUG_MODE).toBe(true);
    expect(c.CORPUS_LOG_LEVEL).toBe("WARNING");
    expect(c.corsOrigins).toEqual(["https://a.example.com", "http://b.example:3000"]);
    expect(c.resourceUrl).toBe("https://corpus.example.com");
    expect(c.issuer).toBe("http://[::1]:9000");
  });

  test("a wildcard CORPUS_HOST is no address a client goes to: resource URL and issuer are this machine's loopback (D4)", () => {
    for (const [host, url] of [
      ["0.0.0.0", "http://127.0.0.1:8080"],
      ["::", "http://[::1]:8080"],
      ["[::]", "http://[::1]:8080"],
    ]) {
      const c = loadConfig({ CORPUS_HOST: host });
      expect({ host, resourceUrl: c.resourceUrl, issuer: c.issuer }).toEqual({ host, resourceUrl: url!, issuer: url! });
    }
    const set = loadConfig({
      CORPUS_HOST: "0.0.0.0",
      CORPUS_OAUTH_RESOURCE_URL: "https://corpus.example.com",
      CORPUS_OAUTH_ISSUER: "https://id.example.com",
    });
    expect([set.resourceUrl, set.issuer]).toEqual(["https://corpus.example.com", "https://id.example.com"]);
  });

  test("with the port bound, the own URLs name it; set variables stay as they are (D4)", () => {
    expect(ownUrls(loadConfig({ CORPUS_PORT: "0" }), 41234)).toEqual({
      resourceUrl: "http://127.0.0.1:41234",
      issuer: "http://127.0.0.1:41234",
    });
    expect(ownUrls(loadConfig({ CORPUS_PORT: "0", CORPUS_OAUTH_ISSUER: "https://id.example.com/" }), 41234)).toEqual({
      resourceUrl: "http://127.0.0.1:41234",
      issuer: "https://id.example.com",
    });
  });

  test("an empty value means the default", () => {
    expect(loadConfig({ CORPUS_PORT: "" }).CORPUS_PORT).toBe(8080);
  });

  const bad: Array<[string, string, string]> = [
    ["CORPUS_PORT", "abc", "an integer from 0 to 65535"],
    ["CORPUS_PORT", "70000", "an integer from 0 to 65535"],
    ["CORPUS_PORT", "8.5", "an integer from 0 to 65535"],
    ["CORPUS_DEBUG_MODE", "maybe", "true or false"],
    ["CORPUS_AUTH_DISABLED", "yes please", "true or false"],
    ["CORPUS_LOG_LEVEL", "LOUD", "one of DEBUG, INFO, WARNING, ERROR, CRITICAL"],
    ["CORPUS_RATE_LIMIT_REQUESTS_PER_MINUTE", "0", "an integer from 1 to"],
    ["CORPUS_MAX_REQUEST_SIZE", "-1", "an integer from 1024 to"],
    ["CORPUS_REQUEST_TIMEOUT", "0", "an integer from 1 to 3600"],
    ["CORPUS_LIMIT_QUERY_PER_MINUTE", "x", "an integer from 1 to"],
    ["CORPUS_LIMIT_QUERY_PER_DAY", "0", "an integer from 1 to"],
    ["CORPUS_LIMIT_DEEP_SEARCH_PER_MINUTE", "-5", "an integer from 1 to"],
    ["CORPUS_LIMIT_DEEP_SEARCH_PER_DAY", "1e3", "an integer from 1 to"],
    ["CORPUS_LIMIT_DELETE_PER_MINUTE", "ten", "an integer from 1 to"],
    ["CORPUS_LIMIT_DELETE_PER_DAY", "0", "an integer from 1 to"],
    ["CORPUS_OAUTH_RESOURCE_URL", "corpus.example.com", "an http:// or https:// URL"],
    ["CORPUS_OAUTH_ISSUER", "ftp://x", "an http:// or https:// URL"],
    ["CORPUS_OAUTH_AUTHORIZATION_ENDPOINT", "not a url", "an http:// or https:// URL"],
    ["CORPUS_OAUTH_TOKEN_ENDPOINT", "/token", "an http:// or https:// URL"],
    ["CORPUS_OAUTH_JWKS_URI", "keys.json", "an http(s):// URL or a file:// path"],
    ["CORPUS_CORS_ALLOW_ORIGINS_CSV", "*", "comma-separated origins"],
    ["CORPUS_WEBHOOK_URL", "mailto:x", "an http:// or https:// URL"],
    ["CORPUS_WEBHOOK_ALLOW_PRIVATE", "2", "true or false"],
    ["CORPUS_TRUSTED_PROXIES", "proxy.local", "comma-separated IP addresses or CIDR ranges"],
    ["CORPUS_MIN_FREE_BYTES", "256MiB", "an integer from 0 to"],
  ];
  for (const [name, value, allowed] of bad) {
    test(`${name}=${value} is refused with one line naming it`, () => {
      let error: unknown;
      try {
        loadConfig({ [name]: value });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ConfigError);
      const message = (error as Error).message;
      expect(message).toStartWith(`${name}=${JSON.stringify(value)} is not allowed: expected `);
      expect(message).toContain(allowed);
      expect(message).not.toContain("\n");
    });
  }

  test("the operator webhook needs its secret", () => {
    expect(() => loadConfig({ CORPUS_WEBHOOK_URL: "https://hooks.example.com/x" })).toThrow("CORPUS_WEBHOOK_SECRET is not set");
    expect(
      loadConfig({ CORPUS_WEBHOOK_URL: "https://hooks.example.com/x", CORPUS_WEBHOOK_SECRET: "0123456789abcdef" }).CORPUS_WEBHOOK_URL,
    ).toBe("https://hooks.example.com/x");
  });

  test("secrets are never echoed in errors", () => {
    expect(() => loadConfig({ CORPUS_MASTER_KEY: "c2VjcmV0LXZhbHVl" })).toThrow(
      "CORPUS_MASTER_KEY=(hidden) is not allowed: expected 32 bytes in base64",
    );
    expect(() => loadConfig({ CORPUS_WEBHOOK_SECRET: "short" })).toThrow("CORPUS_WEBHOOK_SECRET=(hidden)");
  });

  test("every variable of the second document is known, under CORPUS_", () => {
    const names = describeConfig().map((v) => v.name);
    for (const v of [
      "CORS_ALLOW_ORIGINS_CSV",
      "DEBUG_MODE",
      "LOG_LEVEL",
      "RATE_LIMIT_REQUESTS_PER_MINUTE",
      "OAUTH_RESOURCE_URL",
      "OAUTH_ISSUER",
      "OAUTH_AUTHORIZATION_ENDPOINT",
      "OAUTH_TOKEN_ENDPOINT",
      "OAUTH_JWKS_URI",
      "MAX_REQUEST_SIZE",
      "REQUEST_TIMEOUT",
    ])
      expect(names).toContain(`CORPUS_${v}`);
    for (const v of describeConfig()) expect(v.description.length).toBeGreaterThan(5);
  });
});
