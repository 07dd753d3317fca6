/**
 * A maintenance pass run in the background, one at a time: a pass asked for while one is under way
 * (or after stop) is dropped, since the next one asked for does the same work; a failure is
 * dropped too, for the same reason. `stop` waits for the pass under way, so a store closes its
 * pool only after it.
 */
export interface BackgroundPass {
  /** Starts `pass` unless one is under way or the store is stopping; whether it started it. */
  start(pass: () => Promise<unknown>): boolean;
  /** Resolves when no pass is under way. */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

export function createBackgroundPass(): BackgroundPass {
  let running: Promise<void> | undefined;
  let stopped = false;
  const idle = async () => {
    await running;
  };
  return {
    start(pass) {
      if (running || stopped) return false;
      running = pass()
        .then(
          () => undefined,
          () => undefined,
        )
        .finally(() => {
          running = undefined;
        });
      return true;
    },
    idle,
    async stop() {
      stopped = true;
      await idle();
    },
  };
}
