import { describe, expect, it } from 'vitest';
import { createOriginRequests } from './origin-requests.js';

const ORIGIN = 'https://hooks.example.com';

describe('routing requests between the two pools', () => {
  it('keeps an account alone at an origin in the first pool, waiting there past its connections', () => {
    const requests = createOriginRequests(4);
    const routes = Array.from({ length: 6 }, () => requests.open(ORIGIN, 'acct_a'));
    expect(routes).toEqual([
      ...Array(4).fill({ pool: 0, queued: false }),
      ...Array(2).fill({ pool: 0, queued: true }),
    ]);
  });

  it('sends an account with fewer than half the connections there through the second pool while the first is full, as long as it has room', () => {
    const requests = createOriginRequests(4);
    for (let i = 0; i < 4; i++) requests.open(ORIGIN, 'acct_a');
    expect(requests.open(ORIGIN, 'acct_b')).toEqual({ pool: 1, queued: false });
    expect(requests.open(ORIGIN, 'acct_b')).toEqual({ pool: 1, queued: false });
    // Two of its own open: half the connections, so it waits in the first pool like anyone.
    expect(requests.open(ORIGIN, 'acct_b')).toEqual({ pool: 0, queued: true });
    expect(requests.open(ORIGIN, 'acct_c')).toEqual({ pool: 1, queued: false });
    expect(requests.open(ORIGIN, 'acct_d')).toEqual({ pool: 1, queued: false });
    // The second is full too: the first, which frees a connection as soon.
    expect(requests.open(ORIGIN, 'acct_e')).toEqual({ pool: 0, queued: true });
    // Another origin, and requests of no account (operator notices), are counted apart.
    expect(requests.open('https://other.example.com', 'acct_e')).toEqual({ pool: 0, queued: false });
    expect(requests.open(ORIGIN, undefined)).toEqual({ pool: 0, queued: true });
  });

  it('routes by what is open now: a request over or given back is counted no more', () => {
    const requests = createOriginRequests(2);
    requests.open(ORIGIN, 'acct_a');
    requests.open(ORIGIN, 'acct_a');
    const first = requests.open(ORIGIN, 'acct_b');
    expect(first).toEqual({ pool: 1, queued: false });
    const waiting = requests.open(ORIGIN, 'acct_b');
    expect(waiting).toEqual({ pool: 0, queued: true });
    requests.close(ORIGIN, 'acct_b', waiting);
    expect(requests.open(ORIGIN, 'acct_c')).toEqual({ pool: 1, queued: false });
    requests.close(ORIGIN, 'acct_b', first);
    // acct_b has none open now, and the second pool has room again for one of its.
    expect(requests.open(ORIGIN, 'acct_b')).toEqual({ pool: 1, queued: false });
    expect(requests.open(ORIGIN, 'acct_d')).toEqual({ pool: 0, queued: true });
  });
});
