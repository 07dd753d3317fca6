/**
 * Time is injected (design D14): the engine reads `clock.now()` for every
 * timestamp and schedule decision, so tests run the 10.5-hour retry schedule in virtual time.
 */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock that moves only when told to; for tests and simulations. */
export class ManualClock implements Clock {
  constructor(private current: number = Date.UTC(2026, 0, 1)) {}
  now(): number {
    return this.current;
  }
  set(time: number): void {
    this.current = time;
  }
  advance(ms: number): number {
    this.current += ms;
    return this.current;
  }
}
