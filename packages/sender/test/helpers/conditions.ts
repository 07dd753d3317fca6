/**
 * Waiting for a condition that can only change when something happens (a request goes out, a
 * checkpoint runs): the test says when it happened, and each waiter checks again then, never on
 * a timer.
 *
 * @example
 * const sent = conditions();
 * client.send = async () => { out.push(1); sent.changed(); ... };
 * await sent.until(() => out.length === 2);
 */
export function conditions() {
  const waiting = new Set<() => void>();
  return {
    /** Something happened: every condition waited for is checked again. */
    changed() {
      for (const check of [...waiting]) check();
    },
    /** Resolves once `condition` holds: checked now, then at each `changed()`. */
    until(condition: () => boolean): Promise<void> {
      return new Promise((resolve) => {
        const check = () => {
          if (!condition()) return;
          waiting.delete(check);
          resolve();
        };
        waiting.add(check);
        check();
      });
    },
  };
}
