// The time a question asks for (D32: read once, into its plan): a date or a range in words ("last
// month", "in March", "since 2001", "between March 1 and March 15"; chrono-node with an injectable
// clock), and whether it is a time asked for or merely part of what is sought (issue 16).
import * as chrono from "chrono-node";
import { MONTH_WORDS, monthOf } from "./document-dates";
import { anyOf, wholeWords } from "./language/patterns";
import { ASKS_WHEN, all, DAY_CUES, type Language, OPEN_ENDS, RANGE_JOINS, RELATIVE_TIMES, TIME_CUES, WEEKDAYS } from "./language/words";
import { FILE_WORDS, MAIL_WORDS, ROW_WORDS } from "./record-kinds";

/** chrono's components can be assigned; its published type leaves that out. */
const assign = (c: chrono.ParsedComponents, unit: "year", value: number) =>
  (c as unknown as { assign(u: string, v: number): void }).assign(unit, value);

function startOfDayUtc(d: Date): Date {
  return new Date(Date.UTC(d.getFullYear(), d.getMonth(), d.getDate()));
}

/** A time cue just before a date (TIME_CUES); relative dates (RELATIVE_TIMES) ask for a time by themselves. */
const TIME_CUE = new RegExp(`${wholeWords(all(TIME_CUES))}(\\s+the)?\\s*$`, "iu");
const CUE_FIRST = new RegExp(`^\\s*${wholeWords(all(TIME_CUES))}`, "iu");
const RELATIVE = new RegExp(wholeWords(all(RELATIVE_TIMES)), "iu");
/** A question that is a subject line (a reply or forward) names dates as words, never as a time asked. */
const SUBJECT_LINE = /^\s*(re|fw|fwd|aw|wg)\s*:/i;
/**
 * A question asking when something is names the time of what it asks about, not of the records
 * that tell it: "When is the Board of Directors meeting in August 2001?" is answered by the notice
 * sent in July (outside walkthrough: the date narrowed the mail to August and lost it).
 */
const ASKS_WHEN_FIRST = new RegExp(`^\\s*${wholeWords(all(ASKS_WHEN))}`, "iu");
/** A kind of record and the word that dates it, just before the date: "invoices in", "receipts from", "mail since". */
const RECORDS_DATED = new RegExp(
  `(${[MAIL_WORDS, FILE_WORDS, ROW_WORDS].map((r) => r.source).join("|")})\\s+(in|from|of|during|since|dated)(\\s+the)?\\s*$`,
  "i",
);

/** A date a Date can hold, or none: a range's end past the last day one holds is no date (it would throw where it is written). */
const held = (d: Date | undefined) => (d && !Number.isNaN(d.getTime()) ? d : undefined);

/**
 * The days a question names for the records it asks about (D32): UTC ranges (end exclusive), of
 * any year when it said none ("on 14 May", "FRI 09/02": a receipt's year is not the last one), on
 * one weekday when it named one. Documents are weighed by the days their own text names.
 */
export interface DaysSaid {
  ranges: Array<[number, number]>;
  anyYear: boolean;
  /** 0 for Sunday, as Date's getUTCDay. */
  weekday?: number;
  /** A day with its month's name ("29 maart 2014"), as documents write it: its words are searched too. */
  written?: boolean;
}

export interface QuestionTime {
  from?: Date;
  to?: Date;
  spans: Array<[number, number]>;
  asked: boolean;
  days?: DaysSaid;
}

/** Whether a day (UTC ms) is one of the days said. */
export function onDaysSaid(t: number, d: DaysSaid): boolean {
  const day = new Date(t);
  if (d.weekday !== undefined && day.getUTCDay() !== d.weekday) return false;
  return d.ranges.some(([from, to]) => {
    if (!d.anyYear) return t >= from && t < to;
    const y = new Date(from).getUTCFullYear();
    return [y, y + 1].some((year) => {
      const same = Date.UTC(year, day.getUTCMonth(), day.getUTCDate());
      return same >= from && same < to;
    });
  });
}

export function dateRange(text: string, now: Date, language: Language = "en"): QuestionTime {
  const named = daysOf(text, now, language);
  const found = named ?? dateRangeOf(text, now);
  const r = { ...found, from: held(found.from), to: held(found.to) };
  if (!r.spans.length || SUBJECT_LINE.test(text)) return { from: r.from, to: r.to, spans: r.spans, asked: false };
  const [a, b] = r.spans[0]!;
  // Unless the date is of the records asked for ("When did I pay invoices in March 2023?") or follows "when in".
  if (ASKS_WHEN_FIRST.test(text) && !RECORDS_DATED.test(text.slice(0, a)) && !/^\s*when\s+((in|during|since)\s*)?$/i.test(text.slice(0, a)))
    return { from: r.from, to: r.to, spans: r.spans, asked: false };
  if (named) return named;
  const said = text.slice(a, b);
  const on = /\bon\s*$/i.test(text.slice(0, a)) && /\b(19|20)\d\d\b/.test(said);
  const asked = on || TIME_CUE.test(text.slice(0, a)) || RELATIVE.test(said) || CUE_FIRST.test(said);
  const range: [number, number] = [r.from?.getTime() ?? Number.NEGATIVE_INFINITY, r.to?.getTime() ?? Number.POSITIVE_INFINITY];
  return { ...r, asked, ...(asked && (r.from || r.to) ? { days: { ranges: [range], anyYear: false } } : {}) };
}

/** The grammar of a day or days said by name or number, in the question's language and English (receipts print English). */
const grammarOf = (l: Language) => {
  const weekdays = [...new Set([...WEEKDAYS.en, ...WEEKDAYS[l]])];
  const weekday = `(?:(?<weekday>${anyOf(weekdays.flatMap((row) => row.split(" ")))})\\.?,?\\s+)?`;
  const month = (n: string) => `(?<${n}>${anyOf(MONTH_WORDS)})\\.?`;
  const day = (n: string) => `(?<${n}>\\d{1,2})(?:st|nd|rd|th|er|\\.)?`;
  const year = "(?:,?\\s+(?<year>(?:19|20)\\d\\d))?";
  const join = `\\s*(?:-|–|${wholeWords([...RANGE_JOINS.en, ...RANGE_JOINS[l]])})\\s*`;
  const cue = `(?:(?<cue>${anyOf([...all(TIME_CUES), ...all(DAY_CUES)])})\\s+)?`;
  const re = (body: string) => new RegExp(`(?<![\\p{L}\\d])${cue}${body}(?![\\p{L}\\d])`, "giu");
  return {
    /** A second date joined to the one a rule read ("December 2023 to January 2024"): a range no rule reads whole. */
    joined: new RegExp(
      `^${join}(?:\\d{1,2}(?:st|nd|rd|th|er|\\.)?\\s+(?:of\\s+)?${anyOf(MONTH_WORDS)}|${anyOf(MONTH_WORDS)}\\.?\\s+\\d|\\d{1,2}[/.-]\\d{1,2})`,
      "iu",
    ),
    weekdayOf: new Map(weekdays.flatMap((row, i) => row.split(" ").map((w) => [w, (i + 1) % 7] as const))),
    rules: [
      // "between March 1 and March 15 2024", "from 1 March to 15 April".
      re(`${month("month")}\\s+${day("day")}${join}${month("lastMonth")}\\s+${day("last")}${year}`),
      re(`${day("day")}\\s+${month("month")}${join}${day("last")}\\s+${month("lastMonth")}${year}`),
      // "between 10 and 20 June 2017", "from 1 to 10 February", "10-20 May".
      re(`${day("day")}${join}${day("last")}\\s+(?:of\\s+)?${month("month")}${year}`),
      // "from May to July 2023", "between March and May".
      re(`${month("month")}${join}${month("lastMonth")}${year}`),
      // "Sunday 24 June 2018", "on 14 May", "21. November 2016", "May 14, 2018".
      re(`${weekday}${day("day")}\\s+(?:of\\s+)?${month("month")}${year}`),
      re(`${weekday}${month("month")}\\s+${day("day")}${year}`),
      // "FRI 09/02", "on 24/05/2017", "WED 24/01/18": either reading (receipts' countries write the day first).
      re(`${weekday}(?<day>\\d{1,2})[/.-](?<month>\\d{1,2})(?:[/.-](?<year>\\d{4}|\\d{2}))?`),
      // "March 2018", "maart 2018".
      re(`${month("month")}\\s+(?<year>(?:19|20)\\d\\d)`),
    ],
  };
};
const GRAMMARS = new Map<Language, ReturnType<typeof grammarOf>>();
/** "From March onwards", "from March to date": the end left open. */
const ONWARDS = /^\s*(onwards?|on\b|forward|to date|to now|until now|till now|to the end)/i;
const OPEN_END = new RegExp(`^${anyOf(all(OPEN_ENDS))}$`, "iu");
const DAY_MS = 86_400_000;
/** A year that has every day (29 February): a day said without a year is kept in it, and matched in any year. */
const ANY_YEAR = 2000;

/** The days said by the first rule of the grammar that reads a day, or undefined. */
function daysOf(text: string, now: Date, l: Language): QuestionTime | undefined {
  const g = GRAMMARS.get(l) ?? GRAMMARS.set(l, grammarOf(l)).get(l)!;
  // Each match of each rule in turn: a day said as part of what is sought comes before the one asked ("Tokyo Presentation 15 May: what did I buy on 16 May 2018?").
  for (const rule of g.rules)
    for (const m of text.matchAll(rule)) {
      const n = m.groups;
      if (!n) continue;
      const y = n.year ? (n.year.length === 2 ? 2000 + Number(n.year) : Number(n.year)) : undefined;
      const weekday = n.weekday ? g.weekdayOf.get(n.weekday.toLowerCase()) : undefined;
      // A day is of the records asked for after a cue word ("on", "between", "op", "le"), a weekday, as a range
      // of days ("10-20 May") or a month and year ("mars 2018"); else it is part of what is sought ("Tokyo Presentation 15 May", "3/4 of": issue 16).
      if (!n.cue && weekday === undefined && !n.last && !(n.year && !n.day)) continue;
      // "Since", "before": one end open, as the reading below reads it.
      const end = m.index + m[0].length;
      // A year at each end: the whole range is chrono's (below), not this rule's first end alone.
      if (!n.last && !n.lastMonth && g.joined.test(text.slice(end))) return undefined;
      if ((n.cue && OPEN_END.test(n.cue)) || ONWARDS.test(text.slice(end, end + 24)) || /starting\s+$/i.test(text.slice(0, m.index)))
        continue;
      const numbers = /^\d/.test(n.month!);
      const inYear = y ?? ANY_YEAR;
      const valid = (mo: number, d: number, year: number) => mo >= 1 && mo <= 12 && new Date(Date.UTC(year, mo - 1, d)).getUTCDate() === d;
      const [month, d] = [numbers ? Number(n.month) : monthOf(n.month!)!, Number(n.day ?? 1)];
      const [lastMonth, last] = [n.lastMonth ? monthOf(n.lastMonth)! : month, n.last ? Number(n.last) : undefined];
      // A day ("FRI 09/02" either way round), days to a last day, or months to the end of the last.
      const readings = numbers && d !== month ? [[month, d] as const, [d, month] as const] : [[month, d] as const];
      // A range across a year's end ("20 December to 5 January 2018"): its year is its last day's, its first day in the year before.
      const across = lastMonth < month ? 1 : 0;
      const firstYear = y === undefined ? inYear : inYear - across;
      const lastYear = y === undefined ? inYear + across : inYear;
      const ranges = readings
        .filter(([mo, day]) => valid(mo, day, firstYear) && (last === undefined || valid(lastMonth, last, lastYear)))
        .map(([mo, day]): [number, number] => [
          Date.UTC(firstYear, mo - 1, day),
          last !== undefined
            ? Date.UTC(lastYear, lastMonth - 1, last) + DAY_MS
            : n.day
              ? Date.UTC(firstYear, mo - 1, day) + DAY_MS
              : Date.UTC(lastYear, lastMonth, 1),
        ]);
      if (ranges.length === 0 || ranges[0]![1] <= ranges[0]![0]) continue;
      // Without a year, documents match the days in any year; the last such days are the reading's range (books).
      const [from, to] = ranges[0]!;
      const thisYear = Date.UTC(now.getUTCFullYear(), new Date(from).getUTCMonth(), new Date(from).getUTCDate());
      let year = y ?? now.getUTCFullYear() - (thisYear > now.getTime() ? 1 : 0);
      // "On 29 February" without a year: the last year that has it, not an empty range on 1 March.
      const first = new Date(from);
      while (y === undefined && new Date(Date.UTC(year, first.getUTCMonth(), first.getUTCDate())).getUTCDate() !== first.getUTCDate())
        year--;
      const moved = (t: number) => {
        const d = new Date(t);
        return new Date(Date.UTC(year + d.getUTCFullYear() - inYear, d.getUTCMonth(), d.getUTCDate()));
      };
      return {
        from: moved(from),
        to: moved(to),
        // Where the date itself starts, past its cue: what comes before says whose date it is (RECORDS_DATED).
        spans: [[m.index + m[0].length - m[0].slice(n.cue?.length ?? 0).trimStart().length, m.index + m[0].length]],
        // Without a year it is a time of documents only: mail and tables keep every year ("the hearing on April 18").
        asked: y !== undefined,
        days: {
          ranges,
          anyYear: y === undefined,
          ...(weekday !== undefined ? { weekday } : {}),
          ...(n.day && !numbers ? { written: true } : {}),
        },
      };
    }
  return undefined;
}

/** "12.06.2001": day first, as where dates are written with dots (chrono reads it month first). */
const DOTTED_DATE = /(?<![\d.])(\d{1,2})\.(\d{1,2})\.(\d{4})(?![\d.])/g;
/** "from 2000 to 2001", "between 2000 and 2001", "van 2000 tot 2001", "1999-2001": every year of it. */
const YEAR_RANGE = new RegExp(
  `(?:${wholeWords(all(TIME_CUES))}\\s+)?\\b((?:19|20)\\d\\d)\\s*(?:${wholeWords(all(RANGE_JOINS))}|-|–)\\s*((?:19|20)\\d\\d)\\b`,
  "iu",
);

/**
 * How much of a question chrono reads at once. It compares the dates it finds with each other: "Mon 1 "
 * said 666 times (3,996 characters) took 1.1 s of the serving thread (D31), and more than linear time.
 */
const CHRONO_WINDOW = 96;
/** The words before a window's half that the next window reads again: chrono reads "May" as a month after "in" only. */
const CHRONO_CONTEXT = 24;
/** Where a window may start: a word's or number's first character, so that none is read from its middle. */
const WORD_START = /[^\p{L}\d][\p{L}\d]/gu;

/**
 * chrono's first two dates, the only ones read below, with their places in the whole text: the
 * text is read in windows of twice CHRONO_WINDOW until one holds a date in its first half, whose
 * second half holds its range's second date ("between March 1 and March 15") with it.
 */
function firstDates(text: string, now: Date): chrono.ParsedResult[] {
  for (let from = 0; from < text.length; ) {
    const read = chrono
      .parse(text.slice(from, from + 2 * CHRONO_WINDOW), { instant: now, timezone: 0 }, { forwardDate: false })
      .map((r) => Object.assign(r, { index: r.index + from }));
    if (read.length && read[0]!.index < from + CHRONO_WINDOW) return read;
    // The next window starts at a word just before this one's half: a date begun before the half was read whole here.
    WORD_START.lastIndex = from + CHRONO_WINDOW - CHRONO_CONTEXT;
    const next = WORD_START.exec(text);
    if (!next) break;
    from = next.index + 1;
  }
  return [];
}

function dateRangeOf(text: string, now: Date): { from?: Date; to?: Date; spans: Array<[number, number]> } {
  // Rewritten as year-month-day of the same length, so that what chrono finds is where it was said.
  const dayFirst = text.replace(DOTTED_DATE, (all, d: string, m: string, y: string) =>
    Number(d) >= 1 && Number(d) <= 31 && Number(m) >= 1 && Number(m) <= 12 ? `${y}-${m}-${d}` : all,
  );
  const results = firstDates(dayFirst, now);
  if (results.length === 0) {
    const years = YEAR_RANGE.exec(text);
    if (years && Number(years[2]) >= Number(years[1]))
      return {
        from: new Date(Date.UTC(Number(years[1]), 0, 1)),
        to: new Date(Date.UTC(Number(years[2]) + 1, 0, 1)),
        spans: [[years.index, years.index + years[0].length]],
      };
    // "since 2001", "in 2001", "before 2002": a bare year chrono leaves alone.
    const year = /\b(since|after|before|until|in|during)?\s*((?:19|20)\d\d)\b/i.exec(text);
    if (!year) return { spans: [] };
    const y = Number(year[2]);
    const word = year[1]?.toLowerCase();
    const start = new Date(Date.UTC(y, 0, 1));
    const end = new Date(Date.UTC(y + 1, 0, 1));
    const spans: Array<[number, number]> = [[year.index, year.index + year[0].length]];
    if (word === "since" || word === "after") return { from: word === "since" ? start : end, spans };
    if (word === "before" || word === "until") return { to: word === "until" ? end : start, spans };
    return { from: start, to: end, spans };
  }
  const r = results[0]!;
  const spans: Array<[number, number]> = [[r.index, r.index + r.text.length]];
  const before = text.slice(Math.max(0, r.index - 8), r.index).toLowerCase();
  // "between March 1 and March 15 2024": two dates joined by and/to make a range.
  const second = results[1];
  if (!r.end && second && /^\s*(and|to|until|-|–)\s*$/i.test(text.slice(r.index + r.text.length, second.index))) {
    const year = second.start.get("year")!;
    // "Between March and May 2023" ends with May.
    const end = second.start;
    const to =
      !end.isCertain("day") && end.isCertain("month")
        ? Date.UTC(year, end.get("month")!, 1)
        : startOfDayUtc(end.date()).getTime() + 86_400_000;
    const yearSaid = r.start.isCertain("year");
    if (!yearSaid) assign(r.start, "year", year);
    // Across a year's end ("December 20 and January 5, 2018"): the first end in the year before.
    if (!yearSaid && startOfDayUtc(r.start.date()).getTime() >= to) assign(r.start, "year", year - 1);
    const from = startOfDayUtc(r.start.date());
    // Ends said the wrong way round ("24/01/18 and 31/12/99") make no range: the first date alone, read below.
    if (from.getTime() < to) {
      spans.push([second.index, second.index + second.text.length]);
      return { from, to: new Date(to), spans };
    }
  }
  // A month or day without a year means the last one, not the next.
  if (!r.start.isCertain("year") && r.start.date() > now) assign(r.start, "year", r.start.get("year")! - 1);
  const start = r.start.date();
  // The unit the words name: a day unless only a month or year was given.
  const known = (c: "day" | "month" | "year") => r.start.isCertain(c);
  let from = startOfDayUtc(start);
  let to: Date;
  // An end named by its month or year runs to that month's or year's end ("from April to June 2014").
  if (r.end && !r.end.isCertain("day") && r.end.isCertain("month")) to = new Date(Date.UTC(r.end.get("year")!, r.end.get("month")!, 1));
  else if (r.end && !r.end.isCertain("day") && !r.end.isCertain("month") && r.end.isCertain("year"))
    to = new Date(Date.UTC(r.end.get("year")! + 1, 0, 1));
  else if (r.end) to = new Date(startOfDayUtc(r.end.date()).getTime() + 86_400_000);
  else if (!known("day") && known("month")) {
    from = new Date(Date.UTC(start.getFullYear(), start.getMonth(), 1));
    to = new Date(Date.UTC(start.getFullYear(), start.getMonth() + 1, 1));
  } else if (!known("day") && !known("month") && known("year")) {
    from = new Date(Date.UTC(start.getFullYear(), 0, 1));
    to = new Date(Date.UTC(start.getFullYear() + 1, 0, 1));
  } else if (/last month|this month|next month/i.test(r.text)) {
    from = new Date(Date.UTC(start.getFullYear(), start.getMonth(), 1));
    to = new Date(Date.UTC(start.getFullYear(), start.getMonth() + 1, 1));
  } else if (/last year|this year/i.test(r.text)) {
    from = new Date(Date.UTC(start.getFullYear(), 0, 1));
    to = new Date(Date.UTC(start.getFullYear() + 1, 0, 1));
  } else if (/last week|this week/i.test(r.text)) {
    to = new Date(from.getTime() + 7 * 86_400_000);
  } else to = new Date(from.getTime() + 86_400_000);
  // "Since" and "after" leave the end open; "invoices from April 2014" are April's (outside walkthrough: read as since).
  // "From March onwards", "from March to date", "starting from March" leave it open too.
  const afterDate = text.slice(r.index + r.text.length, r.index + r.text.length + 24);
  const openEnded =
    /since|after/.test(before) || (/from/.test(before) && (ONWARDS.test(afterDate) || /starting\s+from\s*$/i.test(text.slice(0, r.index))));
  if (openEnded && !r.end) return { from, spans };
  if (/before|until/.test(before) && !r.end) return { to: /until/.test(before) ? to : from, spans };
  // chrono's own range said the wrong way round ("January 31 – 13 march 31"): its first day alone.
  if (to <= from) to = new Date(from.getTime() + 86_400_000);
  return { from, to, spans };
}
