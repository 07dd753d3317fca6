/**
 * @module
 * What cuts a request short (SendRequest.signal): the part of an AbortSignal the delivery clients
 * use, made for every attempt at a fraction of an AbortController's cost (design D68). An
 * AbortSignal has that part too, so a client may be given either.
 */
export interface AbandonSignal {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

export interface Abandon {
  readonly signal: AbandonSignal;
  /** Aborts the signal: its listeners run once, now; later calls do nothing. */
  abort(): void;
}

// Listeners are kept and run as an AbortSignal's are: each once, in the order added, a listener
// added twice kept once, one removed while others run skipped, one added after the abort never
// run, and one that throws leaving the others to run (its error thrown later, as uncaught).
class Abandonment implements Abandon, AbandonSignal {
  aborted = false;
  /** Most signals have one listener (the client's) or none. */
  private listeners: (() => void)[] | null = null;

  // Its own signal: one object for each attempt, not two.
  get signal(): AbandonSignal {
    return this;
  }

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    const listeners = this.listeners;
    for (let next = listeners?.shift(); next !== undefined; next = listeners?.shift()) {
      try {
        next();
      } catch (error) {
        queueMicrotask(() => {
          throw error;
        });
      }
    }
    this.listeners = null;
  }

  addEventListener(_type: 'abort', listener: () => void): void {
    if (this.aborted) return;
    if (!this.listeners) this.listeners = [listener];
    else if (!this.listeners.includes(listener)) this.listeners.push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const at = this.listeners?.indexOf(listener) ?? -1;
    if (at !== -1) this.listeners?.splice(at, 1);
  }
}

/**
 * @example
 * const abandon = createAbandon();
 * const sent = client.send({ url, body, headers, signal: abandon.signal });
 * abandon.abort(); // the lease was lost: the request ends as abandoned
 */
export function createAbandon(): Abandon {
  return new Abandonment();
}
