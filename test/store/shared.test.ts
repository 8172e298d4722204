// The store is chosen once at start (D33): a set CORPUS_DATABASE_URL is never a silent SQLite.
// Every room is shared now: the start goes to that database before it opens or makes anything.
import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../../src/config";
import { createLogger, memorySink } from "../../src/log";
import { createServices } from "../../src/services";
import { andThen, NOT_YET_SHARED, refuseUntilShared, SHARED_ROOMS } from "../../src/store/shared";
import { tempDir } from "../helpers";

const URL = "postgresql://corpus:pw-not-shown@db.internal:5432/corpus?sslmode=verify-full";

describe("CORPUS_DATABASE_URL (D33)", () => {
  test("read and checked: a postgres URL is taken, anything else refused without echoing it", () => {
    expect(loadConfig({ CORPUS_DATABASE_URL: URL }).CORPUS_DATABASE_URL).toBe(URL);
    expect(loadConfig({}).CORPUS_DATABASE_URL).toBeUndefined();
    expect(() => loadConfig({ CORPUS_DATABASE_URL: "mysql://corpus:pw-not-shown@db/corpus" })).toThrow(
      "CORPUS_DATABASE_URL=(hidden) is not allowed: expected a postgres:// or postgresql:// URL",
    );
  });

  test("set, with every room shared: the start is not refused but goes to that database, one it cannot reach stops it before any SQLite is made", async () => {
    expect(NOT_YET_SHARED).toEqual([]);
    expect(SHARED_ROOMS).toContain("the local index and its vectors");
    const unreachable = "postgresql://corpus:pw-not-shown@127.0.0.1:1/corpus";
    expect(() => refuseUntilShared({ CORPUS_DATABASE_URL: unreachable })).not.toThrow();
    const dataDir = join(tempDir(), "data");
    const config = loadConfig({ CORPUS_DATA_DIR: dataDir, CORPUS_DATABASE_URL: unreachable });
    const logs = memorySink();
    const message = await createServices(config, createLogger("INFO", logs.sink)).then(
      () => "",
      (error: Error) => error.message,
    );
    expect(message).toContain("ECONNREFUSED");
    expect(message).not.toContain("not yet");
    expect(message).not.toContain("pw-not-shown");
    expect(existsSync(dataDir)).toBe(false);
  });

  test("andThen: at once on a value (the embedded store stays synchronous), later on a promise", async () => {
    expect(andThen(2, (n) => n + 1)).toBe(3);
    const later = andThen(Promise.resolve(2), (n) => n + 1);
    expect(later).toBeInstanceOf(Promise);
    expect(await later).toBe(3);
  });
});
