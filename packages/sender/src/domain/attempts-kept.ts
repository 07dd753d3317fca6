/**
 * The attempts a delivery keeps, its latest (design D16). Retried by hand again and again (120
 * times a minute), a delivery gathered attempts without end, and each step that deletes deliveries
 * (a prune, an endpoint's or an account's deletion) deleted every attempt of each of its own at once.
 */
export const ATTEMPTS_KEPT = 100;

/** Whether a delivery with `attempts` attempts lets its oldest go when its next is scheduled. */
export const attemptFallsOut = (attempts: number) => attempts >= ATTEMPTS_KEPT;
