/**
 * What cuts a request short (SendRequest.signal): the part of an AbortSignal the delivery clients
 * use, which an AbortSignal has too. The worker makes one for each attempt, and the delivery
 * thread one for each request it sends: an AbortController in each place cost about twelve times
 * as much CPU, twice a delivery (design D68).
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

class Abandonment implements Abandon, AbandonSignal {
  aborted = false;
  /** Most signals have one listener (the client's) or none. */
  private listeners: (() => void)[] | null = null;

  get signal(): AbandonSignal {
    return this;
  }

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    const listeners = this.listeners;
    this.listeners = null;
    if (listeners) for (const listener of listeners) listener();
  }

  // As an AbortSignal's: every listener runs once, and one added after the abort never does.
  addEventListener(_type: 'abort', listener: () => void): void {
    if (this.aborted) return;
    if (this.listeners) this.listeners.push(listener);
    else this.listeners = [listener];
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
