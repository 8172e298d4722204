// Who wrote a mail (senders.ts, D32): the "From:" lines of the messages it holds, as Notes and
// Outlook write them, else its sender's address; a question asking who wrote, sent or announced
// something is answered by them.
import { expect, test } from "bun:test";
import { extractiveAnswer } from "../../src/retrieval/answer";
import { planQuery } from "../../src/retrieval/plan";
import { sendersOf } from "../../src/retrieval/senders";

const FORWARD = [
  "---------------------- Forwarded by Steven J Kean/HOU/EES on 08/01/2000 08:22 AM ---------------------------",
  "From: Ken Rice and Kevin Hannon@ENRON COMMUNICATIONS on 07/28/2000 03:10 PM",
  "Sent by: EBS Announcements@ENRON COMMUNICATIONS",
  "To: All EBS Employees Houston",
  "Subject: Joe Hirko farewell reception",
  "",
  "As you are aware, Joe Hirko has announced that he will be leaving Enron.",
  "Please drop by the Energizer on Tuesday, August 1 any time between 2:30 and 4:00 p.m. for an open house in honor of Joe.",
].join("\n");

test("a mail's senders: Notes' and Outlook's From lines, an address's name, else the mail's sender", () => {
  expect(sendersOf("From: Ken Rice@ECT on 05/06/2001 10:40 AM\r\nFrom: \tKaminski, Vince J  \nFrom: steven.kean@enron.com")).toEqual([
    "Ken Rice",
    "Kaminski, Vince J",
    "steven kean",
  ]);
  expect(sendersOf("Von: Anna Schmidt <anna@example.de>\nDe : Jean Dupont")).toEqual(["Anna Schmidt", "Jean Dupont"]);
  expect(sendersOf("no header here", "maureen.mcvicker@enron.com")).toEqual(["maureen.mcvicker@enron.com"]);
  // Notes forwards without a From line: the name alone above the time it wrote.
  const notes =
    "----- Forwarded by Steven J Kean/NA/Enron on 10/09/2000 03:31 PM -----\n\n\tMarcia A Linton\n\t10/09/2000 10:40 AM\n\t\t To: James";
  expect(sendersOf(notes, "steven.kean@enron.com")).toEqual(["Marcia A Linton"]);
  // Bounded: a thread of 100,000 From lines names its first few; a 1 MB line is read by its start.
  expect(sendersOf("From: A B\n".repeat(100_000)).length).toBe(4);
  expect(sendersOf(`From: ${"x".repeat(1_000_000)}`)).toEqual([]);
});

test("who announced or sent it is answered by the message's sender, not a sentence repeating the question's words", () => {
  const source = { text: FORWARD, type: "email" as const, metadata: { from: "steven.kean@enron.com" } };
  expect(extractiveAnswer(planQuery("Who announced Joe Hirko's farewell reception?"), [source])).toBe(
    "From: Ken Rice and Kevin Hannon. [1]",
  );
  // Not asked who wrote it: the senders are no candidates.
  expect(extractiveAnswer(planQuery("Who is leaving Enron?"), [source])).toContain("Joe Hirko has announced");
});

test("who approved what a mail asks is answered by the sender of the reply approving it, in each language of the tables", () => {
  const reply = [
    "Let's process this request.  I think it's justified.",
    "---------------------- Forwarded by Steven J Kean/HOU/EES on 04/18/2000 05:29 PM ---------------------------",
    "Richard Shapiro",
    "04/17/2000 09:33 AM",
    "Subject: Re: Contribution to Sacramento Women's Campaign Fund",
    "Please call on Wednesday to discuss so we can bring to closure. Thanks.",
  ].join("\n");
  const source = { text: reply, type: "email" as const, metadata: { from: "steven.kean@enron.com" } };
  for (const q of ["Who approved the Sacramento Women's Campaign Fund request?", "Wer hat die Spende genehmigt?"])
    expect([q, extractiveAnswer(planQuery(q), [source])]).toEqual([q, expect.stringContaining("From: steven.kean@enron.com")]);
});
