// Issue 35 (D31): an answer's pending chunks (or RESUME_BATCH of them after a restart) got their
// vectors rotated by the user's archive rotation all in one turn of the serving thread, 24-43 ms
// while hostile sources were indexed (~1 ms a vector on a loaded machine). They are rotated with
// turns of the event loop between, by a budget of time; the clock here counts rotations instead.
import { expect, spyOn, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { owedInTurns } from "../../src/archive/store";
import { TURN_MS, Turns } from "../../src/connectors/turns";
import { VectorRotation } from "../../src/crypto/rotation";
import { EMBEDDING_DIM } from "../../src/embedding/embedder";
import { mostPerTurn } from "../support/turn-watch";

test("an answer's owed vectors are rotated with turns of the event loop between, each as the rotation gives it", async () => {
  const rotation = VectorRotation.fromKey(randomBytes(32), EMBEDDING_DIM);
  const OWED = 40;
  const pending = Array.from({ length: OWED }, (_, i) => ({ id: i + 1, queryId: `q${i % 3}` }));
  const vectors = pending.map((_, i) => new Float32Array(EMBEDDING_DIM).fill(0.01 * (i + 1)));
  const applied = spyOn(VectorRotation.prototype, "apply");
  try {
    // The clock counts rotations (as if each took 1 ms); a watcher counts those between two turns.
    const perTurn = mostPerTurn(() => applied.mock.calls.length);
    const owed = await owedInTurns(rotation, pending, vectors, new Turns(() => applied.mock.calls.length));
    const most = perTurn.stop();
    expect(applied).toHaveBeenCalledTimes(OWED);
    // Was all 40 in one turn.
    expect(most).toBeLessThanOrEqual(TURN_MS + 1);
    expect(owed.map((o) => [o.id, o.queryId])).toEqual(pending.map((p) => [p.id, p.queryId]));
    owed.forEach((o, i) => expect([...o.vector]).toEqual([...rotation.apply(vectors[i]!)]));
  } finally {
    applied.mockRestore();
  }
});
