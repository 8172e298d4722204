// The process's gate on password hashes (issue 35 item 2): HASHES_RUNNING at once, HASHES_WAITING
// in order behind them, the rest refused at once; a slot freed goes to the next in the queue.
import { describe, expect, test } from "bun:test";
import { HashesBusy, HashGate } from "../../src/accounts/hash-gate";

describe("hash gate", () => {
  test("200 hashes asked at once: 2 run, 8 wait, 190 are refused; the waiting run in order as slots free", async () => {
    const gate = new HashGate(2, 8);
    const finish: Array<() => void> = [];
    const order: number[] = [];
    let running = 0;
    let peak = 0;
    const task = (i: number) => () =>
      new Promise<number>((done) => {
        order.push(i);
        peak = Math.max(peak, ++running);
        finish.push(() => {
          running--;
          done(i);
        });
      });
    const outcomes = Array.from({ length: 200 }, (_, i) =>
      gate.run(task(i)).then(
        (v) => ({ ok: v }),
        (e: unknown) => ({ refused: e }),
      ),
    );
    await Bun.sleep(0);
    expect(order).toEqual([0, 1]);
    while (finish.length) {
      finish.shift()!();
      await Bun.sleep(0);
    }
    const settled = await Promise.all(outcomes);
    expect(settled.filter((o) => "ok" in o).map((o) => (o as { ok: number }).ok)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const refused = settled.filter((o) => "refused" in o).map((o) => (o as { refused: unknown }).refused);
    expect(refused.length).toBe(190);
    expect(refused.every((e) => e instanceof HashesBusy && e.retryAfter > 0)).toBe(true);
    expect(order).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(peak).toBe(2);
    expect(gate.peak).toBe(2);
    expect(gate.started).toBe(10);
  });

  test("a hash that fails frees its slot", async () => {
    const gate = new HashGate(1, 0);
    await expect(gate.run(() => Promise.reject(new Error("broken")))).rejects.toThrow("broken");
    expect(await gate.run(async () => 7)).toBe(7);
  });
});
