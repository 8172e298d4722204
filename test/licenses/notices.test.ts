// `corpus licenses` (D35): the notices are the build's; from source it says where they are.
import { expect, test } from "bun:test";
import { parseArgs } from "../../src/cli";
import { bundledNotices, licensesOutput } from "../../src/licenses/notices";

test("run from source, there are no compiled notices, and `corpus licenses` says the build writes them", async () => {
  expect(await bundledNotices()).toBeUndefined();
  await expect(licensesOutput(false)).rejects.toThrow(
    "the notices are compiled into the executable by its build (npm run build writes dist/corpus and dist/THIRD-PARTY-NOTICES.txt)",
  );
});

test("corpus licenses takes --json and nothing else", () => {
  expect(parseArgs(["licenses", "--json"])).toEqual({ command: "licenses", options: { json: "true" } });
  expect(parseArgs(["licenses"])).toEqual({ command: "licenses", options: {} });
  expect(() => parseArgs(["licenses", "--json=yes"])).toThrow("--json takes no value");
  expect(() => parseArgs(["licenses", "extra"])).toThrow("unexpected argument extra");
});
