// Who wrote a mail (D32): the "From:" lines of the messages it holds, its own and those it
// forwards or quotes, as Notes and Outlook write them ("From: Ken Rice and Kevin Hannon@ENRON
// COMMUNICATIONS on 07/28/2000 03:10 PM", "From: Kaminski, Vince J"; Notes' forward without one,
// a name alone above the time it wrote: "Marcia A Linton" / "10/09/2000 10:40 AM"), else its sender's address.
// A question asking who wrote, sent or announced something (asked.ts author) is answered by them.
import { anyOf } from "./language/patterns";
import { all, SENDER_HEADERS } from "./language/words";

/** A sender's line: the header, then the name up to an address, a date or the line's end (its first LINE_PROBE characters). */
const SENDER_LINE = new RegExp(`^\\s*${anyOf(all(SENDER_HEADERS))}\\s*:\\s*([^@<>\\n]{2,80}?)\\s*(?:@|<|\\bon\\s+\\d|$)`, "iu");
const LINE_PROBE = 200;
/** A time alone on its line, as Notes writes it under its writer's name. */
const WRITTEN_AT = /^\s*\d{1,2}\/\d{1,2}\/\d{2,4}\s+\d{1,2}:\d{2}(:\d{2})?\s*([AP]M)?\s*$/i;
/** A name alone on its line: one to four capitalised words. */
const NAME_ALONE = /^\s*(\p{Lu}[\p{L}.'-]{0,20}(?:\s\p{Lu}[\p{L}.'-]{0,20}){0,3})\s*$/u;
/** The most senders a mail names: a long thread's first few. */
const MAX_SENDERS = 4;

/** The senders a mail's text names, in order; its `from` (an address) when it names none. An address's name is written with spaces ("steven kean"). */
export function sendersOf(text: string, from?: string): string[] {
  const names: string[] = [];
  let previous = "";
  for (const line of text.split(/\r?\n/)) {
    const probe = line.slice(0, LINE_PROBE);
    const name = (SENDER_LINE.exec(probe)?.[1] ?? (WRITTEN_AT.test(probe) ? NAME_ALONE.exec(previous)?.[1] : undefined))?.trim();
    if (probe.trim()) previous = probe;
    if (name && /\p{L}/u.test(name)) names.push(/\s/.test(name) ? name : name.replace(/[._]+/g, " "));
    if (names.length === MAX_SENDERS) break;
  }
  return names.length || !from ? names : [from];
}
