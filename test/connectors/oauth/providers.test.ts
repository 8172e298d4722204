// The operator's OAuth providers for IMAP (CORPUS_IMAP_OAUTH_PROVIDERS_FILE, issue 38): read
// once at start, a bad file stopping the start with one line naming the provider and the field.
import { afterEach, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError } from "../../../src/config";
import { loadProviders } from "../../../src/connectors/oauth/providers";
import { tempDir, testApp } from "../../helpers";

const microsoft = {
  id: "microsoft",
  title: "Microsoft 365",
  authorization_endpoint: "https://login.microsoftonline.com/common/oauth2/v2.0/authorize",
  token_endpoint: "https://login.microsoftonline.com/common/oauth2/v2.0/token",
  client_id: "00000000-0000-0000-0000-000000000000",
  scopes: ["https://outlook.office.com/IMAP.AccessAsUser.All", "offline_access"],
  imap_hosts: ["Outlook.Office365.com."],
};

const fileOf = (content: unknown) => {
  const file = join(tempDir("corpus-providers-"), "providers.json");
  writeFileSync(file, typeof content === "string" ? content : JSON.stringify(content));
  return file;
};

const refusal = (content: unknown) => {
  try {
    loadProviders(fileOf(content));
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message.replace(/^CORPUS_IMAP_OAUTH_PROVIDERS_FILE="[^"]+" is not allowed: /, "");
  }
  throw new Error("the file was taken");
};

const opened: Array<{ services: { close(): Promise<void> } }> = [];
afterEach(async () => {
  for (const t of opened.splice(0)) await t.services.close();
});

describe("CORPUS_IMAP_OAUTH_PROVIDERS_FILE", () => {
  test("a provider is read with its IMAP hosts normalized; the client secret is optional (a public client)", () => {
    const providers = loadProviders(fileOf([microsoft]));
    expect(providers.get("microsoft")).toEqual({ ...microsoft, imap_hosts: ["outlook.office365.com"] });
  });

  test("each mistake is named with its provider and field", () => {
    expect(refusal("{not json")).toBe("expected a readable JSON file");
    expect(refusal({ providers: [] })).toBe("expected a JSON array of providers");
    expect(refusal([{ ...microsoft, client_id: undefined }])).toStartWith("provider 1 (microsoft): client_id: ");
    expect(refusal([microsoft, microsoft])).toBe("provider 2 (microsoft): id microsoft is listed twice");
    expect(refusal([{ ...microsoft, token_endpoint: "http://login.example.com/token" }])).toBe(
      "provider 1 (microsoft): token_endpoint: expected https:// (http only on loopback)",
    );
    expect(refusal([{ ...microsoft, authorization_endpoint: "https://user:pw@login.example.com/a" }])).toBe(
      "provider 1 (microsoft): authorization_endpoint: expected a URL without credentials or fragment",
    );
    expect(refusal([{ ...microsoft, scopes: ["two words"] }])).toStartWith("provider 1 (microsoft): scopes.0: ");
    expect(refusal([{ ...microsoft, imap_hosts: [] }])).toStartWith("provider 1 (microsoft): imap_hosts: ");
    expect(refusal([{ ...microsoft, imap_hosts: ["imap.example.com/x"] }])).toBe(
      'provider 1 (microsoft): imap_hosts: "imap.example.com/x" is not a host name or IP address',
    );
    expect(refusal([{ ...microsoft, authorization_parameters: { prompt: "consent", redirect_uri: "https://evil.example" } }])).toBe(
      "provider 1 (microsoft): authorization_parameters: redirect_uri is set by corpus itself",
    );
    expect(refusal([{ ...microsoft, extra: 1 }])).toStartWith("provider 1 (microsoft): extra: ");
    // http on loopback is allowed (a provider on the same machine, the tests' own).
    expect(loadProviders(fileOf([{ ...microsoft, token_endpoint: "http://127.0.0.2:8443/token" }])).size).toBe(1);
  });

  test("the server does not start with a bad file, and the message names no client secret", async () => {
    const file = fileOf([{ ...microsoft, client_secret: "s3cret-value", token_endpoint: "ftp://x" }]);
    const started = testApp({ CORPUS_IMAP_OAUTH_PROVIDERS_FILE: file }).then((t) => opened.push(t));
    await expect(started).rejects.toThrow("provider 1 (microsoft): token_endpoint: expected https:// (http only on loopback)");
    await started.catch((error: Error) => expect(error.message).not.toContain("s3cret-value"));
  });
});
