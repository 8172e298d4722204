// D31: work on the serving thread (a record's words blinded, records made ready to store) gives
// the event loop a turn once TURN_MS have passed since the last, whatever the shape of the input:
// a budget of time, not of characters or records (a unique word costs ~10-35 µs to stem and
// hash, a repeated one far less; 100,000 tiny records are as long as one huge one).
import { setImmediate as nextTurn } from "node:timers/promises";

/** The longest run of work between two turns of the event loop. */
export const TURN_MS = 10;

/** Work shared by the steps of one task, giving the event loop a turn whenever its budget is spent. */
export class Turns {
  private last: number;

  /** `clock` in milliseconds (tests pass one counting work done). */
  constructor(
    private readonly clock: () => number = () => performance.now(),
    private readonly budgetMs = TURN_MS,
  ) {
    this.last = clock();
  }

  /** True once the budget is spent: then `await next()`. Cheap (a look at the clock), call it between small pieces of work. */
  due(): boolean {
    return this.clock() - this.last >= this.budgetMs;
  }

  /** The event loop turns; the budget starts again. */
  async next(): Promise<void> {
    await nextTurn();
    this.last = this.clock();
  }

  /** A turn if the budget is spent. */
  async maybe(): Promise<void> {
    if (this.due()) await this.next();
  }
}
