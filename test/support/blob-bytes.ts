// A database whose statements count the bytes of BLOBs handed to SQLite and read back: work a
// test can count (a record's seal compared once or once per chunk), where a duration could not
// be asserted on a busy machine.
import type { Database } from "bun:sqlite";

const blobBytes = (values: unknown[]): number =>
  values.reduce<number>((n, v) => {
    if (v instanceof Uint8Array) return n + v.byteLength;
    if (Array.isArray(v)) return n + blobBytes(v);
    if (v && typeof v === "object") return n + blobBytes(Object.values(v));
    return n;
  }, 0);

/** `db` as its users see it, and the BLOB bytes its statements moved so far. */
export function countingBlobBytes(db: Database): { db: Database; bytes: () => number; reset: () => void } {
  let bytes = 0;
  const statement = (s: object) =>
    new Proxy(s, {
      get(target, prop) {
        const value = Reflect.get(target, prop, target);
        if (typeof value !== "function") return value;
        if (!["get", "all", "run", "values"].includes(String(prop))) return value.bind(target);
        return (...args: unknown[]) => {
          bytes += blobBytes(args);
          const out = value.apply(target, args);
          bytes += blobBytes([out]);
          return out;
        };
      },
    });
  const counted = new Proxy(db, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (prop === "query" || prop === "prepare") return (sql: string) => statement(value.call(target, sql));
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { db: counted, bytes: () => bytes, reset: () => (bytes = 0) };
}
