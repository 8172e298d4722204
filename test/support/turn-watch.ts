// How much counted work ran between two turns of the event loop (D31): a watcher scheduled at
// every turn notes how far the count grew since the one before; `stop()` ends it and answers the
// most seen in one turn.
export function mostPerTurn(count: () => number): { stop(): number } {
  let most = 0;
  let seen = count();
  let running = true;
  const watch = () => {
    most = Math.max(most, count() - seen);
    seen = count();
    if (running) setImmediate(watch);
  };
  setImmediate(watch);
  return {
    stop: () => {
      running = false;
      return most;
    },
  };
}
