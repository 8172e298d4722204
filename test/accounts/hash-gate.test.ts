// The process's gate on password hashes (issue 35 item 2): HASHES_RUNNING at once, HASHES_WAITING
// in order behind them, the rest refused at once; a slot freed goes to the next in the queue.
// A holder (a sign-in's client address) has at most one hash running or waiting.
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

  test("40 holders each asking twice in a row: one hash each at most, so ten holders get the ten places, not five", async () => {
    const gate = new HashGate(2, 8);
    const finish: Array<() => void> = [];
    const ran: string[] = [];
    const task = (holder: string) => () =>
      new Promise<void>((done) => {
        ran.push(holder);
        finish.push(done);
      });
    const outcomes = Array.from({ length: 80 }, (_, i) => {
      const holder = `address-${Math.floor(i / 2)}`;
      return gate.run(task(holder), holder).then(
        () => holder,
        (e: unknown) => (e instanceof HashesBusy ? "busy" : "other"),
      );
    });
    await Bun.sleep(0);
    // One holder's hash waiting: a second from it is refused at once.
    await expect(gate.run(task("address-9"), "address-9")).rejects.toBeInstanceOf(HashesBusy);
    finish.shift()!();
    await Bun.sleep(0);
    // A slot freed: address-0 (done) may ask again and waits; address-1 (running) may not.
    const again = gate.run(task("address-0"), "address-0");
    await expect(gate.run(task("address-1"), "address-1")).rejects.toBeInstanceOf(HashesBusy);
    while (finish.length) {
      finish.shift()!();
      await Bun.sleep(0);
    }
    await again;
    const settled = await Promise.all(outcomes);
    const tenHolders = Array.from({ length: 10 }, (_, i) => `address-${i}`);
    expect(settled.filter((o) => o !== "busy")).toEqual(tenHolders);
    expect(settled.filter((o) => o === "busy").length).toBe(70);
    expect(ran).toEqual([...tenHolders, "address-0"]);
    expect(gate.peak).toBe(2);
  });
});
