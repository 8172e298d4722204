// The backup file (D30), one file in three parts:
//
//   members   each member's bytes, one after another: the database (an SQLite file, as
//             VACUUM INTO wrote it) at byte 0, then DATA_DIR/signing-key.json
//   manifest  UTF-8 JSON (manifest.ts): versions, schema, created_at, each member's offset,
//             size and sha256
//   trailer   56 bytes: the manifest's length (unsigned 64-bit big-endian), its sha256 (32
//             bytes), and the magic "corpus-backup-v1"
//
// The database comes first so that VACUUM INTO writes the snapshot straight into the file: no
// second copy on disk. The trailer at the end finds the manifest, and its sha256 makes any
// changed byte of the file (member, manifest or trailer) a refusal, never a half restore.
import { createHash } from "node:crypto";
import { fstatSync, readSync } from "node:fs";
import { BACKUP_MESSAGES, BackupError } from "./errors";
import { type Manifest, parseManifest } from "./manifest";

export const MAGIC = Buffer.from("corpus-backup-v1", "ascii");
const LENGTH_BYTES = 8;
const HASH_BYTES = 32;
export const TRAILER_BYTES = LENGTH_BYTES + HASH_BYTES + MAGIC.length;
/** A manifest is a few hundred bytes; more than this is not one of ours. */
const MAX_MANIFEST_BYTES = 1 << 20;

/** The manifest and trailer appended after the members. */
export function manifestAndTrailer(manifest: Manifest): Buffer {
  const json = Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`, "utf8");
  const length = Buffer.alloc(LENGTH_BYTES);
  length.writeBigUInt64BE(BigInt(json.length));
  return Buffer.concat([json, length, createHash("sha256").update(json).digest(), MAGIC]);
}

/** Reads and checks the trailer and the manifest of the open backup `fd` (named `file` in messages). */
export function readManifest(fd: number, file: string): { manifest: Manifest; size: number } {
  const size = fstatSync(fd).size;
  if (size < TRAILER_BYTES) throw new BackupError(BACKUP_MESSAGES.notABackup(file));
  const trailer = Buffer.alloc(TRAILER_BYTES);
  readExactly(fd, trailer, size - TRAILER_BYTES);
  if (!trailer.subarray(LENGTH_BYTES + HASH_BYTES).equals(MAGIC)) throw new BackupError(BACKUP_MESSAGES.notABackup(file));
  const length = trailer.readBigUInt64BE(0);
  if (length === 0n || length > BigInt(Math.min(MAX_MANIFEST_BYTES, size - TRAILER_BYTES))) {
    throw new BackupError(BACKUP_MESSAGES.damaged(file, "its trailer gives an impossible manifest length"));
  }
  const json = Buffer.alloc(Number(length));
  const start = size - TRAILER_BYTES - json.length;
  readExactly(fd, json, start);
  if (
    !createHash("sha256")
      .update(json)
      .digest()
      .equals(trailer.subarray(LENGTH_BYTES, LENGTH_BYTES + HASH_BYTES))
  ) {
    throw new BackupError(BACKUP_MESSAGES.damaged(file, "its manifest does not match the manifest's sha256"));
  }
  return { manifest: parseManifest(json, start, file), size };
}

function readExactly(fd: number, into: Buffer, position: number): void {
  let done = 0;
  while (done < into.length) {
    const n = readSync(fd, into, done, into.length - done, position + done);
    if (n === 0) throw new RangeError("the file ends early");
    done += n;
  }
}
