// One statement cannot be interrupted: a LIKE over a 300,000-row table for a 450-word question held
// the serving thread for 70 s (issue 13). SQLite's statements run in the one SQLite reader of every
// connector now (sqlite-reader.ts, D31), or on the serving thread where it cannot start; either
// way one search must not hold it. So a SQLite table is read in windows of its key (rowid, or a WITHOUT ROWID table's first key
// column), newest first, each sized to take about WINDOW_MS, with a turn of the event loop in
// between; the reading stops at a deadline or when the search gave up, with what was found.

/** Work per window on the request thread; the window's row count follows what it took. */
export const WINDOW_MS = 20;
const FIRST_WINDOW = 1_000;
const MIN_WINDOW = 50;
const MAX_WINDOW = 200_000;
/**
 * Bytes of the searched cells one window holds at most (its first row whatever its size): a
 * LIKE reads every byte, and windows of rows only held 20 rows of 1 MB in one statement, ~20-40
 * ms a word of the question (D31). Measured by octet_length, which reads no cell.
 */
export const WINDOW_BYTES = 2 * 1024 * 1024;
/** Keys kept of the best rows, as a multiple of the limit, before they are narrowed down again. */
const KEEP_FACTOR = 4;

type Row = Record<string, unknown>;
export type Select = (sql: string, params: unknown[]) => Promise<Row[]>;

const quote = (id: string) => `"${id.replaceAll('"', '""')}"`;
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** When to stop: a deadline (performance.now()) and the search's signal. */
export interface ScanBounds {
  deadline: number;
  signal?: AbortSignal;
  /** Told at each turn between windows (the SQLite reader tells the serving thread it is not stuck: sqlite-reader.ts). */
  turned?: () => void;
}

export const over = (b: ScanBounds) => performance.now() >= b.deadline || b.signal?.aborted === true;

/**
 * The expression a table is read by in windows: `rowid` (or its other names, if a column takes
 * one), or the first key column of a WITHOUT ROWID table; undefined if it has none.
 */
export async function windowKey(select: Select, table: string): Promise<string | undefined> {
  const [listed] = await select("SELECT wr FROM pragma_table_list WHERE name = ?", [table]);
  const columns = await select("SELECT name, pk FROM pragma_table_info(?)", [table]);
  if (Number(listed?.wr ?? 0) === 1) {
    const first = columns.find((c) => Number(c.pk) === 1);
    return first ? quote(String(first.name)) : undefined;
  }
  const names = new Set(columns.map((c) => String(c.name).toLowerCase()));
  return ["rowid", "_rowid_", "oid"].find((n) => !names.has(n));
}

/**
 * Windows of `table` by `key`, newest first: the condition that selects each, with its
 * parameters and row count. `read.whole` says, once they are done, whether the table was.
 */
async function* windows(
  select: Select,
  table: string,
  key: string,
  bounds: ScanBounds,
  read = { whole: false },
  /** A row's bytes as SQL: each window then holds at most WINDOW_BYTES of them past its first row. */
  bytes?: string,
): AsyncGenerator<{ range: string; params: unknown[]; rows: number }> {
  let upper: unknown;
  let size = FIRST_WINDOW;
  while (!over(bounds)) {
    const started = performance.now();
    const below = upper === undefined ? [] : [upper];
    const newest = `SELECT ${key} AS corpus_key${bytes ? `, ${bytes} AS corpus_bytes` : ""} FROM ${quote(table)}${upper === undefined ? "" : ` WHERE ${key} < ?`} ORDER BY ${key} DESC LIMIT ?`;
    // The bytes of the newer rows of the window before each: those within the bound are a run of
    // the newest (its first always); `corpus_asked` the rows there were to take.
    const keys = bytes
      ? `SELECT corpus_key, corpus_asked FROM (SELECT corpus_key, count(*) OVER () AS corpus_asked,
           sum(corpus_bytes) OVER (ORDER BY corpus_key DESC ROWS UNBOUNDED PRECEDING) - corpus_bytes AS corpus_before FROM (${newest}))
         WHERE corpus_before < ${WINDOW_BYTES}`
      : `SELECT corpus_key, 0 AS corpus_asked FROM (${newest})`;
    // Rows within the bound all together (a small table's, read in one window) need no running sum:
    // its window function was ~1/3 of the SQLite reader's CPU a question (Chinook's 412 invoices).
    const whole = bytes
      ? (
          await select(
            `SELECT min(corpus_key) AS corpus_low, count(*) AS corpus_rows, count(*) AS corpus_asked, sum(corpus_bytes) AS corpus_bytes FROM (${newest})`,
            [...below, size],
          )
        )[0]
      : undefined;
    const [edge] =
      whole && Number(whole.corpus_bytes ?? 0) < WINDOW_BYTES
        ? [whole]
        : await select(`SELECT min(corpus_key) AS corpus_low, count(*) AS corpus_rows, max(corpus_asked) AS corpus_asked FROM (${keys})`, [
            ...below,
            size,
          ]);
    const rows = Number(edge?.corpus_rows ?? 0);
    if (rows === 0) return void (read.whole = true);
    yield { range: `${key} >= ?${upper === undefined ? "" : ` AND ${key} < ?`}`, params: [edge!.corpus_low, ...below], rows };
    // Fewer rows than asked: the table ends here, unless the window was cut by its bytes.
    const asked = bytes ? Number(edge?.corpus_asked ?? 0) : rows;
    if (rows === asked && asked < size) return void (read.whole = true);
    upper = edge!.corpus_low;
    // The time includes the caller's work on the window; the size at most doubles at a time.
    const took = Math.max(1, performance.now() - started);
    size = Math.min(MAX_WINDOW, 2 * size, Math.max(MIN_WINDOW, Math.round((size * WINDOW_MS) / took)));
    await turn();
    bounds.turned?.();
  }
}

/** The rows of `table`, counted window by window; undefined if the bounds came first. */
export async function countRows(select: Select, table: string, key: string, bounds: ScanBounds): Promise<number | undefined> {
  const read = { whole: false };
  let n = 0;
  for await (const w of windows(select, table, key, bounds, read)) n += w.rows;
  return read.whole ? n : undefined;
}

export interface WindowedQuery {
  table: string;
  key: string;
  /** The selected columns, joined. */
  columns: string;
  /** Conditions with `?` placeholders, in the order of `params`. */
  where: string[];
  params: unknown[];
  /** The ORDER BY clause. */
  order: string;
  limit: number;
  /** The bytes of a row's searched cells as SQL (octet_length: no cell read), bounding each window's (WINDOW_BYTES). */
  bytes?: string;
}

/** The best `limit` rows by `order` that match `where`, read window by window within `bounds`. */
export async function selectInWindows(select: Select, q: WindowedQuery, bounds: ScanBounds): Promise<Row[]> {
  const from = quote(q.table);
  const filter = q.where.map((w) => ` AND ${w}`).join("");
  let kept: unknown[] = [];
  // The key is selected bare: an alias could take the name of a column ORDER BY means.
  const keyOf = (row: Row) => Object.values(row)[0];
  // The best of the keys kept so far, in SQLite's own order.
  const narrow = async (keys: unknown[], columns: string) =>
    select(`SELECT ${columns} FROM ${from} WHERE ${q.key} IN (${keys.map(() => "?").join(", ")}) ORDER BY ${q.order} LIMIT ?`, [
      ...keys,
      q.limit,
    ]);
  for await (const w of windows(select, q.table, q.key, bounds, undefined, q.bytes)) {
    const rows = await select(`SELECT ${q.key} FROM ${from} WHERE ${w.range}${filter} ORDER BY ${q.order} LIMIT ?`, [
      ...w.params,
      ...q.params,
      q.limit,
    ]);
    kept.push(...rows.map(keyOf));
    if (kept.length > KEEP_FACTOR * q.limit) kept = (await narrow(kept, q.key)).map(keyOf);
  }
  if (!kept.length) return [];
  if (!q.bytes) return narrow(kept, q.columns);
  // The best keys in order, then their rows a few at a time: read in one statement, 20 rows of
  // 1 MB were 20 MB read at once (D31).
  return rowsInBatches(select, q, (await narrow(kept, q.key)).map(keyOf), bounds.turned);
}

/** The rows of `keys` (q.columns), in their order, read in batches of at most WINDOW_BYTES of their cells (q.bytes; a batch's first row whatever its size), a turn between. */
async function rowsInBatches(select: Select, q: WindowedQuery, keys: unknown[], turned?: () => void): Promise<Row[]> {
  const from = quote(q.table);
  const marks = (n: number) => Array.from({ length: n }, () => "?").join(", ");
  const sizes = await select(
    `SELECT ${q.key} AS corpus_key, ${q.bytes} AS corpus_bytes FROM ${from} WHERE ${q.key} IN (${marks(keys.length)})`,
    keys,
  );
  const bytesOf = new Map(sizes.map((r) => [r.corpus_key, Number(r.corpus_bytes)]));
  const byKey = new Map<unknown, Row>();
  for (let i = 0; i < keys.length; ) {
    const batch = [keys[i++]];
    let bytes = bytesOf.get(batch[0]) ?? 0;
    while (i < keys.length && bytes + (bytesOf.get(keys[i]) ?? 0) <= WINDOW_BYTES) {
      bytes += bytesOf.get(keys[i]) ?? 0;
      batch.push(keys[i++]);
    }
    for (const { corpus_key, ...row } of await select(
      `SELECT ${q.key} AS corpus_key, ${q.columns} FROM ${from} WHERE ${q.key} IN (${marks(batch.length)})`,
      batch,
    ))
      byKey.set(corpus_key, row);
    if (i < keys.length) {
      await turn();
      turned?.();
    }
  }
  return keys.flatMap((k) => (byKey.has(k) ? [byKey.get(k)!] : []));
}
