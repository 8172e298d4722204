// D29: a write that fails for want of space (or on a failing disk) is a state the service
// answers, never a crash. One test for such errors and one set of words for them, used by the
// REST error mapper (507), the MCP tools (isError), connector statuses and the health route.

/** SQLite result codes (and their extended forms) and errno names that mean "cannot write". */
const SQLITE_CODES = /^SQLITE_(FULL|IOERR)/;
const ERRNO_CODES = new Set(["ENOSPC", "EDQUOT", "EIO", "EFBIG"]);

/** Whether `error` says the data folder cannot take writes (SQLITE_FULL, SQLITE_IOERR*, ENOSPC, EIO). */
export function isStorageError(error: unknown): boolean {
  if (!error || typeof error !== "object") return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string" && (SQLITE_CODES.test(code) || ERRNO_CODES.has(code))) return true;
  const cause = (error as { cause?: unknown }).cause;
  return cause !== undefined && cause !== error && isStorageError(cause);
}

/** What a client is told when its request needed a write that the disk refused. */
export const STORAGE_FULL_MESSAGE =
  "the server's storage is full, so nothing could be saved; retry later (searching what is indexed and deleting your data still work)";

/** A connector's reason while it cannot write its index. */
export const INDEXING_PAUSED_FULL = "indexing paused: the server's storage is full; it resumes by itself once space is freed";
