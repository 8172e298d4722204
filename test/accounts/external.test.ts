// People signed in by an upstream OpenID Connect provider (issue 17): kept apart from password
// accounts, never one of them, listed with where they came from, removed like any user.
import { describe, expect, test } from "bun:test";
import { AccountError } from "../../src/accounts/store";
import { testApp } from "../helpers";

describe("upstream accounts", () => {
  test("linked, listed, not a password account, removed", async () => {
    const { services } = await testApp();
    const accounts = services.accounts;
    await accounts.add("bob", "bob's long password");
    accounts.linkExternal("oidc-12345678-alice", "https://id.example.com", "alice", "Alice A.");
    // A second sign-in updates the name and time, the same person.
    accounts.linkExternal("oidc-12345678-alice", "https://id.example.com", "alice", "Alice");
    expect(accounts.exists("oidc-12345678-alice")).toBe(true);
    expect(accounts.isExternal("oidc-12345678-alice")).toBe(true);
    expect(accounts.isExternal("bob")).toBe(false);
    const listed = accounts.list();
    expect(listed.map((a) => a.id)).toEqual(["bob", "oidc-12345678-alice"]);
    expect(listed[1]!.upstream).toMatchObject({ issuer: "https://id.example.com", subject: "alice", name: "Alice" });
    expect(listed[1]!.passwordChangedAt).toBeUndefined();
    // No password here: none can be set, none verifies, and the id cannot be taken by a password account.
    await expect(accounts.setPassword("oidc-12345678-alice", "a new long password")).rejects.toBeInstanceOf(AccountError);
    expect(await accounts.verify("oidc-12345678-alice", "anything at all")).toBe(false);
    await expect(accounts.add("oidc-12345678-alice", "a long password!")).rejects.toThrow("already exists");
    // A password account's id, another subject, or an unsafe id is never linked.
    expect(() => accounts.linkExternal("bob", "https://id.example.com", "bob", null)).toThrow("password account");
    expect(() => accounts.linkExternal("oidc-12345678-alice", "https://id.example.com", "mallory", null)).toThrow("another");
    expect(() => accounts.linkExternal("../etc", "https://id.example.com", "x", null)).toThrow(AccountError);
    expect(accounts.remove("oidc-12345678-alice")).toBe(true);
    expect(accounts.exists("oidc-12345678-alice")).toBe(false);
    expect(accounts.exists("bob")).toBe(true);
  });
});
