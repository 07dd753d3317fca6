import { describe, expect, it } from 'vitest';
import { pickDue } from './pick-due.js';

const due = (...endpoints: string[]) => endpoints.map((endpoint, i) => ({ id: `d${i}`, endpoint }));
const pick = (
  rows: { id: string; endpoint: string }[],
  inFlight: [string, number][],
  cap: number,
  limit: number,
) => pickDue(rows, (r) => r.endpoint, new Map(inFlight), cap, limit).map((r) => r.id);

describe('pickDue', () => {
  it('takes deliveries in due order up to the limit', () => {
    expect(pick(due('a', 'b', 'c', 'd'), [], 10, 3)).toEqual(['d0', 'd1', 'd2']);
  });

  it('passes over an endpoint at its cap and takes the ones behind it (invariant 6)', () => {
    expect(pick(due('a', 'a', 'a', 'b', 'a', 'b'), [], 2, 10)).toEqual(['d0', 'd1', 'd3', 'd5']);
  });

  it('counts what is in flight already against the cap', () => {
    expect(
      pick(
        due('a', 'b', 'a', 'b'),
        [
          ['a', 2],
          ['b', 1],
        ],
        2,
        10,
      ),
    ).toEqual(['d1']);
  });

  it('takes nothing at a limit of 0 or less, and copes with an empty queue', () => {
    expect(pick(due('a'), [], 1, 0)).toEqual([]);
    expect(pick(due(), [], 1, 5)).toEqual([]);
  });

  it('stops reading the queue once it has the limit', () => {
    let read = 0;
    function* cursor() {
      for (let i = 0; i < 1000; i++) {
        read++;
        yield { id: `d${i}`, endpoint: `e${i}` };
      }
    }
    expect(pickDue(cursor(), (r) => r.endpoint, new Map(), 1, 5)).toHaveLength(5);
    expect(read).toBe(5);
  });

  it('leaves the caller’s in-flight counts as they were', () => {
    const inFlight = new Map([['a', 1]]);
    pickDue(due('a', 'a'), (r) => r.endpoint, inFlight, 5, 5);
    expect(inFlight.get('a')).toBe(1);
  });
});
