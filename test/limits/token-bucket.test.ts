import { describe, expect, test } from "bun:test";
import { bucketMigrations, TokenBuckets } from "../../src/limits/token-bucket";
import { openDatabase } from "../../src/store/database";
import { tempDir } from "../helpers";

function clock(t = 1_800_000_000_000) {
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

describe("/mcp token bucket per IP (second document part 8)", () => {
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

describe("bounded buckets (issue 13, item 11)", () => {
  test("a bucket drained and never used again is dropped once refilled, in memory and in SQLite", () => {
    const c = clock();
    const db = openDatabase(tempDir(), bucketMigrations);
    const b = new TokenBuckets(db, 60, c.now);
    for (let i = 0; i < 60; i++) b.take("198.51.100.4");
    b.flush();
    c.advance(30_000);
    expect(b.sweep()).toBe(0);
    expect(db.query("SELECT count(*) AS n FROM limits_ip_buckets").get()).toEqual({ n: 1 });
    c.advance(30_000);
    expect(b.sweep()).toBe(1);
    expect(b.size).toBe(0);
    expect(db.query("SELECT count(*) AS n FROM limits_ip_buckets").get()).toEqual({ n: 0 });
    b.stop();
  });

  test("no more than maxEntries buckets: the least recently used goes first, an active drained one stays drained", () => {
    const c = clock();
    const db = openDatabase(tempDir(), bucketMigrations);
    const b = new TokenBuckets(db, 5, c.now, 100);
    for (let i = 0; i < 5; i++) b.take("192.0.2.1");
    for (let i = 0; i < 1000; i++) {
      b.take(`10.0.${i >> 8}.${i & 255}`);
      // The drained client keeps asking: it is never the least recently used.
      if (i % 50 === 0) expect(b.take("192.0.2.1").allowed).toBe(false);
    }
    expect(b.size).toBe(100);
    b.flush();
    expect(db.query("SELECT count(*) AS n FROM limits_ip_buckets").get()).toEqual({ n: 100 });
    expect(b.take("192.0.2.1").allowed).toBe(false);
    b.stop();
  });

  test("a restart with a lower cap loads the most recent buckets only and deletes the rest", () => {
    const c = clock();
    const dir = tempDir();
    const db = openDatabase(dir, bucketMigrations);
    const b = new TokenBuckets(db, 5, c.now, 1000);
    for (let i = 0; i < 300; i++) {
      for (let k = 0; k < 5; k++) b.take(`10.1.${i >> 8}.${i & 255}`);
      c.advance(10);
    }
    b.stop();
    db.close();
    const db2 = openDatabase(dir, bucketMigrations);
    const b2 = new TokenBuckets(db2, 5, c.now, 100);
    expect(b2.size).toBe(100);
    expect(db2.query("SELECT count(*) AS n FROM limits_ip_buckets").get()).toEqual({ n: 100 });
    expect(b2.take("10.1.1.43").allowed).toBe(false); // the 300th, drained
    b2.stop();
  });
});
