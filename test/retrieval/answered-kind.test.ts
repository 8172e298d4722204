// The kind of fact an answer is built for (answer.ts answeredKind), which the answer evaluation
// prints for a miss: a way to reach someone asked is a contact, though the question's kind reads
// "open" (the evaluation printed "read open" for an answer built from contact lines).
import { expect, test } from "bun:test";
import { answeredKind, kindFit } from "../../src/retrieval/answer";
import { planQuery } from "../../src/retrieval/plan";

test("a way to reach someone asked is the kind answered, unless a place is asked; else what the question asks", () => {
  const phone = planQuery("What phone number do I call to pay the Netpresse notice by card?");
  expect({ asks: phone.asks, contact: phone.contact }).toEqual({ asks: "open", contact: true });
  expect(answeredKind(phone)).toBe("contact");
  // The answer is built for it: a phone line fits, as the kind answered says.
  expect(kindFit(phone, "Phone: 01 71 17 61 67")).toBe(1);
  const address = planQuery("Which address was invoice 200 billed to?");
  expect(address.asks).toBe("place");
  expect(answeredKind(address)).toBe("place");
  const date = planQuery("What is the invoice date of the Saeco maintenance kit?");
  expect(answeredKind(date)).toBe(date.asks);
  expect(date.asks).toBe("date");
});
