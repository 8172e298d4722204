// ISO 8601 dates of request bodies: a date means the whole day; date_to includes its day.
import { HttpError } from "../http/errors";

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/;

export function parseIsoDate(value: string, field: string, end: boolean): Date {
  let d: Date;
  if (DATE.test(value)) {
    d = new Date(`${value}T00:00:00Z`);
    if (!Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === value && end) d = new Date(d.getTime() + 86_400_000);
    if (!Number.isNaN(d.getTime()) && (end ? new Date(d.getTime() - 86_400_000) : d).toISOString().slice(0, 10) !== value)
      d = new Date(NaN);
  } else if (DATE_TIME.test(value)) {
    d = new Date(/Z|[+-]\d{2}:?\d{2}$/.test(value) ? value : `${value}Z`);
    if (end && !Number.isNaN(d.getTime())) d = new Date(d.getTime() + 1);
  } else d = new Date(NaN);
  if (Number.isNaN(d.getTime())) throw new HttpError(400, `${field}: must be an ISO 8601 date (YYYY-MM-DD) or date-time`);
  return d;
}

/** deep_search shape A's `time_range` ("<start>..<end>", both days included): its own field in every message. */
export function timeRange(value: string): { from: Date; to: Date } {
  const [start, end] = value.split("..") as [string, string];
  const from = parseIsoDate(start, "time_range", false);
  const to = parseIsoDate(end, "time_range", true);
  if (from >= to) throw new HttpError(400, "time_range: the start must be before the end");
  return { from, to };
}

export function dateRange(from: string | undefined, to: string | undefined, prefix = ""): { from?: Date; to?: Date } {
  const f = from === undefined ? undefined : parseIsoDate(from, `${prefix}date_from`, false);
  const t = to === undefined ? undefined : parseIsoDate(to, `${prefix}date_to`, true);
  if (f && t && f >= t) throw new HttpError(400, `${prefix}date_from: must be before ${prefix}date_to`);
  return { from: f, to: t };
}
