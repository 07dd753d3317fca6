import { describe, expect, it } from 'vitest';
import { sharesOf } from '../../test/helpers/held-up-claim.js';
import { ManualClock } from '../clock.js';
import { COOL_DOWN_MS, ENDPOINT_THRESHOLD, MAX_COOL_DOWN_MS, ORIGIN_THRESHOLD } from '../domain/breaker.js';
import { accountAtOrigin } from '../store/pick-due.js';
import type { ClaimedDelivery } from '../store/records.js';
import type { AttemptMade } from './attempt.js';
import {
  type BreakerCaps,
  type BreakerChange,
  chooseProbes,
  createBreakers,
  FORGET_AFTER_MS,
  FORGET_OPENED_AFTER_MS,
  heldBack,
  MOST_BREAKERS,
  PROBE_MISS_MS,
} from './breakers.js';

const hung = (endpointId: string, accountId = 'acct_a', origin = `https://${endpointId}.example.com`) =>
  ({
    claim: { delivery: { endpointId, accountId }, origin },
    attempt: { failureKind: 'timeout', durationMs: 30_000 },
    heldMs: 30_000,
  }) as unknown as AttemptMade;

describe("a worker's breakers", () => {
  it('leaves an endpoint out while open, and probes it apart once half-open', () => {
    const clock = new ManualClock();
    const breakers = createBreakers(clock);
    for (let i = 0; i < ENDPOINT_THRESHOLD; i++) breakers.observe(hung('ep_1'));
    expect(breakers.caps(8, 16)).toEqual({
      capped: { endpoints: new Map([['ep_1', 0]]), accountsAtOrigins: new Map() },
      probing: [],
    });
    clock.advance(COOL_DOWN_MS);
    const { capped, probing } = breakers.caps(8, 16);
    expect(capped.endpoints).toEqual(new Map([['ep_1', 0]]));
    expect(probing).toEqual([
      { endpointId: 'ep_1', accountId: 'acct_a', origin: 'https://ep_1.example.com' },
    ]);
    // A probe that found nothing due is asked for again a second later, then two, four…
    breakers.missed(['ep_1']);
    expect(breakers.caps(8, 16).probing).toEqual([]);
    clock.advance(PROBE_MISS_MS);
    expect(breakers.caps(8, 16).probing).toHaveLength(1);
    breakers.missed(['ep_1']);
    clock.advance(2 * PROBE_MISS_MS - 1);
    expect(breakers.caps(8, 16).probing).toEqual([]);
    clock.advance(1);
    expect(breakers.caps(8, 16).probing).toHaveLength(1);
    // …at most the longest cool-down apart.
    for (let i = 0; i < 20; i++) breakers.missed(['ep_1']);
    clock.advance(MAX_COOL_DOWN_MS - 1);
    expect(breakers.caps(8, 16).probing).toEqual([]);
    clock.advance(1);
    expect(breakers.caps(8, 16).probing).toHaveLength(1);
    // Its next attempt starts again: an unanswered one trips it, an answer closes it.
    breakers.missed(['ep_1']);
    breakers.observe(hung('ep_1'));
    expect(breakers.caps(8, 16).probing).toEqual([]);
    clock.advance(2 * COOL_DOWN_MS); // its second trip's cool-down, not the misses' 10 minutes
    expect(breakers.caps(8, 16).probing).toHaveLength(1);
    breakers.observe({
      ...hung('ep_1'),
      attempt: { failureKind: null, durationMs: 5 },
      heldMs: 5,
    } as AttemptMade);
    expect(breakers.caps(8, 16)).toEqual({
      capped: { endpoints: new Map(), accountsAtOrigins: new Map() },
      probing: [],
    });
  });

  it('forgets a breaker with no attempt for a while: one never opened in 20 minutes, one opened in a day', () => {
    const clock = new ManualClock();
    const breakers = createBreakers(clock);
    const changes: BreakerChange[] = [];
    // ep_gone tripped, then deleted: no attempt of it again. ep_quiet one unanswered, never opened.
    // ep_live hangs on, probed at each cool-down's end.
    for (let i = 0; i < ENDPOINT_THRESHOLD; i++) breakers.observe(hung('ep_gone'));
    breakers.observe(hung('ep_quiet'));
    for (let i = 0; i < ENDPOINT_THRESHOLD; i++) breakers.observe(hung('ep_live'));
    // An account's endpoints at a relay, each once unanswered: its breaker there trips.
    const relay = 'https://relay.example.com';
    for (let i = 0; i < ORIGIN_THRESHOLD; i++) breakers.observe(hung(`ep_relay_${i}`, 'acct_b', relay));
    const start = clock.now();
    const relays = Array.from({ length: ORIGIN_THRESHOLD }, (_, i) => `ep_relay_${i}`);
    const until = (at: number) => {
      while (clock.now() + MAX_COOL_DOWN_MS <= at) {
        clock.advance(MAX_COOL_DOWN_MS);
        breakers.missed(['ep_gone']);
        breakers.observe(hung('ep_live'));
      }
      clock.set(at);
      const { capped, probing } = breakers.caps(8, 16);
      return {
        endpoints: [...capped.endpoints.keys()].sort(),
        origins: [...capped.accountsAtOrigins.keys()],
        probing,
      };
    };
    const pair = accountAtOrigin('acct_b', relay);
    expect(until(start + FORGET_AFTER_MS)).toMatchObject({
      endpoints: ['ep_gone', 'ep_live', 'ep_quiet', ...relays],
      origins: [pair],
    });
    // Never opened: gone after twice the longest cool-down.
    expect(until(start + FORGET_AFTER_MS + 1)).toMatchObject({
      endpoints: ['ep_gone', 'ep_live'],
      origins: [pair],
    });
    // Opened: kept a day, through retries hours apart.
    expect(until(start + FORGET_OPENED_AFTER_MS)).toMatchObject({
      endpoints: ['ep_gone', 'ep_live'],
      origins: [pair],
    });
    const lastly = until(start + FORGET_OPENED_AFTER_MS + 1);
    expect(lastly).toMatchObject({ endpoints: ['ep_live'], origins: [] });
    expect(lastly.probing.map((p) => p.endpointId)).not.toContain('ep_gone');
    // Forgotten, not hidden: a new trip of ep_gone is its first.
    for (let i = 0; i < ENDPOINT_THRESHOLD; i++) breakers.observe(hung('ep_gone'), (c) => changes.push(c));
    expect(changes.filter((c) => c.kind === 'endpoint')).toEqual([
      expect.objectContaining({ key: 'ep_gone', change: 'opened', trips: 1, coolDownMs: COOL_DOWN_MS }),
    ]);
  });

  it('keeps at most MOST_BREAKERS of each kind, letting go of the one seen longest ago', () => {
    const clock = new ManualClock();
    const breakers = createBreakers(clock);
    const trip = (id: string) => {
      for (let i = 0; i < ENDPOINT_THRESHOLD; i++) breakers.observe(hung(id, `acct_${id}`));
      clock.advance(1);
    };
    for (let i = 0; i < MOST_BREAKERS; i++) trip(`ep_${i}`);
    // The first one seen again: now the last seen.
    trip('ep_0');
    trip('ep_new');
    const { capped } = breakers.caps(8, 16);
    expect(capped.endpoints.size).toBe(MOST_BREAKERS);
    expect(capped.endpoints.has('ep_0')).toBe(true);
    expect(capped.endpoints.has('ep_1')).toBe(false);
    expect(capped.endpoints.has('ep_new')).toBe(true);
  });

  it('counts the time a request held its slot where its record shows none (a name without a public address)', () => {
    const breakers = createBreakers(new ManualClock());
    const slowName = (heldMs: number) =>
      ({ ...hung('ep_n'), attempt: { failureKind: 'dns', durationMs: 0 }, heldMs }) as AttemptMade;
    for (let i = 0; i < ENDPOINT_THRESHOLD; i++) breakers.observe(slowName(5));
    expect(breakers.caps(8, 16).capped.endpoints).toEqual(new Map());
    for (let i = 0; i < ENDPOINT_THRESHOLD; i++) breakers.observe(slowName(5_000));
    expect(breakers.caps(8, 16).capped.endpoints).toEqual(new Map([['ep_n', 0]]));
  });

  it('probes an endpoint apart with a per-endpoint cap of 1 too', () => {
    const clock = new ManualClock();
    const breakers = createBreakers(clock);
    for (let i = 0; i < ENDPOINT_THRESHOLD; i++) breakers.observe(hung('ep_1'));
    clock.advance(COOL_DOWN_MS);
    const { capped, probing } = breakers.caps(1, 1);
    expect(capped.endpoints).toEqual(new Map([['ep_1', 0]]));
    expect(probing.map((p) => p.endpointId)).toEqual(['ep_1']);
  });

  it('tells of the breakers that opened or closed', () => {
    const clock = new ManualClock();
    const breakers = createBreakers(clock);
    /** The changes one attempt's report makes. */
    const changesOf = (report: AttemptMade) => {
      const changes: BreakerChange[] = [];
      breakers.observe(report, (change) => changes.push(change));
      return changes;
    };
    const changes = Array.from({ length: ENDPOINT_THRESHOLD }, () => changesOf(hung('ep_1')));
    expect(changes.slice(0, -1).flat()).toEqual([]);
    expect(changes.at(-1)).toEqual([
      {
        kind: 'endpoint',
        key: 'ep_1',
        accountId: 'acct_a',
        change: 'opened',
        trips: 1,
        coolDownMs: COOL_DOWN_MS,
      },
    ]);
    // An attempt out when it opened is no news; an answer closes it.
    expect(changesOf(hung('ep_1'))).toEqual([]);
    const answered = {
      ...hung('ep_1'),
      attempt: { failureKind: null, durationMs: 5 },
      heldMs: 5,
    } as AttemptMade;
    expect(changesOf(answered)).toEqual([
      { kind: 'endpoint', key: 'ep_1', accountId: 'acct_a', change: 'closed', trips: 1, coolDownMs: 0 },
    ]);
  });

  it("trips an account's breaker at an origin on its endpoints' unanswered attempts there, not on one endpoint its own breaker holds", () => {
    const clock = new ManualClock();
    const breakers = createBreakers(clock);
    const opened: string[] = [];
    const note = (change: BreakerChange) => void (change.change === 'opened' && opened.push(change.kind));
    // One receiver, one endpoint: eight requests out hang; its breaker opens at the third.
    for (let i = 0; i < 8; i++) breakers.observe(hung('ep_1'), note);
    expect(opened).toEqual(['endpoint']);
    expect(breakers.caps(8, 16).capped.accountsAtOrigins).toEqual(new Map());
    // One origin, five endpoints of two accounts (two of one, three of the other) each with one
    // hanging request: neither account's run there is long enough.
    const shared = 'https://shared.example.com';
    for (let i = 0; i < ORIGIN_THRESHOLD; i++) {
      breakers.observe(hung(`ep_s${i}`, i < 2 ? 'acct_b' : 'acct_a', shared), note);
    }
    expect(opened).toEqual(['endpoint']);
    // Two more of acct_a's there: five of its own in a row.
    for (let i = 0; i < 2; i++) breakers.observe(hung(`ep_t${i}`, 'acct_a', shared), note);
    expect(opened).toEqual(['endpoint', 'origin']);
    expect(breakers.caps(8, 16).capped.accountsAtOrigins).toEqual(
      new Map([[accountAtOrigin('acct_a', shared), 0]]),
    );
  });

  it('backs off each customer whose endpoints hang at a relay, and no other customer there', () => {
    const clock = new ManualClock();
    const breakers = createBreakers(clock);
    const opened: string[] = [];
    const note = (change: BreakerChange) =>
      void opened.push(`${change.change} ${change.kind} ${change.key} ${change.accountId}`);
    const relay = 'https://relay.example.com';
    // Two customers' broken integrations: twenty endpoints each at a relay, each request hanging.
    for (let i = 0; i < 20; i++) {
      breakers.observe(hung(`ep_a${i}`, 'acct_a', relay), note);
      breakers.observe(hung(`ep_b${i}`, 'acct_b', relay), note);
    }
    expect(opened).toEqual([`opened origin ${relay} acct_a`, `opened origin ${relay} acct_b`]);
    const { capped } = breakers.caps(8, 48);
    expect(capped.accountsAtOrigins).toEqual(
      new Map([
        [accountAtOrigin('acct_a', relay), 0],
        [accountAtOrigin('acct_b', relay), 0],
      ]),
    );
    // Each endpoint is held to one request by its own breaker until it answers.
    expect(capped.endpoints.size).toBe(40);
    // Half-open after the cool-down: one request of each at a time. A third customer's request
    // there that hangs is that customer's own first.
    clock.advance(COOL_DOWN_MS);
    breakers.observe(hung('ep_c', 'acct_c', relay), note);
    expect(breakers.caps(8, 48).capped.accountsAtOrigins).toEqual(
      new Map([
        [accountAtOrigin('acct_a', relay), 1],
        [accountAtOrigin('acct_b', relay), 1],
      ]),
    );
    // An answered probe closes that customer's breaker there, and only that one.
    breakers.observe(
      {
        ...hung('ep_a0', 'acct_a', relay),
        attempt: { failureKind: null, durationMs: 5 },
        heldMs: 5,
      } as AttemptMade,
      note,
    );
    expect(opened.at(-1)).toBe(`closed origin ${relay} acct_a`);
    expect(breakers.caps(8, 48).capped.accountsAtOrigins).toEqual(
      new Map([[accountAtOrigin('acct_b', relay), 1]]),
    );
  });

  it("chooses the probes with none of their own out, within the shares and an account's breaker at an origin", () => {
    const probe = (endpointId: string, accountId: string, origin: string) => ({
      endpointId,
      accountId,
      origin,
    });
    const caps: BreakerCaps = {
      capped: {
        endpoints: new Map(),
        accountsAtOrigins: new Map([[accountAtOrigin('acct_a', 'https://shut.example.com'), 0]]),
      },
      probing: [
        probe('ep_out', 'acct_a', 'https://a.example.com'),
        probe('ep_shut', 'acct_a', 'https://shut.example.com'),
        // Another account's there: acct_a's breaker holds only acct_a's.
        probe('ep_shut_b', 'acct_b', 'https://shut.example.com'),
        probe('ep_full', 'acct_full', 'https://b.example.com'),
        probe('ep_1', 'acct_a', 'https://c.example.com'),
        probe('ep_2', 'acct_a', 'https://c.example.com'),
        probe('ep_3', 'acct_a', 'https://d.example.com'),
        probe('ep_4', 'acct_a', 'https://e.example.com'),
      ],
    };
    // An account's share of an origin larger than the origin's: the origin's share decides.
    const shares = sharesOf(
      3,
      1,
      [
        ['acct_full', 3],
        ['acct_a', 1],
      ],
      [],
      { cap: 3, open: [] },
    );
    // ep_2 shares ep_1's origin (one each); acct_a has one out, so two more, ep_4 left for the next claim.
    const capped = { ...shares, capped: caps.capped };
    expect(chooseProbes(caps.probing, capped, new Set(['ep_out']), 10)).toEqual([
      'ep_shut_b',
      'ep_1',
      'ep_3',
    ]);
    expect(chooseProbes(caps.probing, capped, new Set(['ep_out']), 1)).toEqual(['ep_shut_b']);
    expect(shares.openByAccount.get('acct_a')).toBe(1);
  });

  it("gives back what a claim brought past an endpoint's or an account's breaker cap at an origin, counting those out", () => {
    const relay = 'https://relay.example.com';
    const claim = (id: string, endpointId: string, accountId: string, origin = relay) =>
      ({ delivery: { id, endpointId, accountId }, origin }) as unknown as ClaimedDelivery;
    const capped = {
      endpoints: new Map([['ep_half', 1]]),
      accountsAtOrigins: new Map([
        [accountAtOrigin('acct_a', relay), 0],
        [accountAtOrigin('acct_b', relay), 1],
      ]),
    };
    const claims = [
      claim('d1', 'ep_a', 'acct_a'),
      claim('d2', 'ep_a_own', 'acct_a', 'https://own.example.com'),
      claim('d3', 'ep_b', 'acct_b'),
      claim('d4', 'ep_b2', 'acct_b'),
      claim('d5', 'ep_c', 'acct_c'),
      claim('d6', 'ep_half', 'acct_c', 'https://half.example.com'),
      claim('d7', 'ep_half', 'acct_c', 'https://half.example.com'),
    ];
    const back = (out: ClaimedDelivery[]) => heldBack(claims, { capped }, out).map((c) => c.delivery.id);
    // acct_a none at the relay, acct_b one there, ep_half one: its own server and acct_c go.
    expect(back([])).toEqual(['d1', 'd4', 'd7']);
    // acct_b's one already out there: none more.
    expect(back([claim('d0', 'ep_b', 'acct_b')])).toEqual(['d1', 'd3', 'd4', 'd7']);
  });

  it("probes no endpoint of an account at its share of an origin, and another account's there (design D25)", () => {
    const relay = 'https://relay.example.com';
    const caps: BreakerCaps = {
      capped: { endpoints: new Map(), accountsAtOrigins: new Map() },
      probing: [
        { endpointId: 'ep_a1', accountId: 'acct_a', origin: relay },
        { endpointId: 'ep_a2', accountId: 'acct_a', origin: relay },
        { endpointId: 'ep_b', accountId: 'acct_b', origin: relay },
        { endpointId: 'ep_a3', accountId: 'acct_a', origin: 'https://own.example.com' },
      ],
    };
    const shares = sharesOf(10, 10, [['acct_a', 1]], [[relay, 1]], {
      cap: 2,
      open: [[accountAtOrigin('acct_a', relay), 1]],
    });
    expect(chooseProbes(caps.probing, { ...shares, capped: caps.capped }, new Set(), 10)).toEqual([
      'ep_a1',
      'ep_b',
      'ep_a3',
    ]);
  });
});
