import { describe, expect, test } from "bun:test";
import { bucketMigrations, TokenBuckets } from "../../src/limits/token-bucket";
import { openDatabase } from "../../src/store/database";
import { tempDir } from "../helpers";

function clock(t = 1_800_000_000_000) {
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

describe("/mcp token bucket per IP (second document part 8)", () => {
  test("60 at once pass, the 61st waits a second; the bucket refills at 1 per second", () => {
    const c = clock();
    const db = openDatabase(tempDir(), bucketMigrations);
    const b = new TokenBuckets(db, 60, c.now);
    for (let i = 0; i < 60; i++) expect(b.take("10.0.0.1").allowed).toBe(true);
    const over = b.take("10.0.0.1");
    expect(over).toMatchObject({ allowed: false, limit: 60, remaining: 0, retryAfter: 1 });
    expect(over.reset).toBe(Math.ceil((c.now() + 60_000) / 1000));
    expect(b.take("10.0.0.2").allowed).toBe(true);
    c.advance(1000);
    expect(b.take("10.0.0.1").allowed).toBe(true);
    expect(b.take("10.0.0.1").allowed).toBe(false);
    c.advance(30_000);
    expect(b.take("10.0.0.1").remaining).toBe(29);
    b.stop();
  });

  test("a restart does not refill an emptied bucket", () => {
    const c = clock();
    const dir = tempDir();
    const db = openDatabase(dir, bucketMigrations);
    const b = new TokenBuckets(db, 5, c.now);
    for (let i = 0; i < 5; i++) b.take("192.0.2.7");
    b.stop();
    db.close();
    const db2 = openDatabase(dir, bucketMigrations);
    const b2 = new TokenBuckets(db2, 5, c.now);
    expect(b2.take("192.0.2.7").allowed).toBe(false);
    b2.stop();
  });
});
