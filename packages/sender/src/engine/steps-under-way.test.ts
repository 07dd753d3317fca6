import { describe, expect, it } from 'vitest';
import { stepsUnderWay } from './steps-under-way.js';

describe('stepsUnderWay', () => {
  it('makes a stop wait for a finishing pass from its first read, and the pass start nothing once stopped', async () => {
    const steps = stepsUnderWay();
    let answer: (ids: string[]) => void = () => {};
    const read = new Promise<string[]>((resolve) => {
      answer = resolve;
    });
    const started: string[] = [];
    const pass = steps.finishing(
      () => read,
      async (id) => {
        started.push(id);
      },
      () => {},
    );
    let stopped = false;
    const stopping = steps.stop().then(() => {
      stopped = true;
    });
    // The pass is still reading: the stop has not ended.
    await new Promise((resolve) => setImmediate(resolve));
    expect(stopped).toBe(false);
    answer(['ep_1', 'ep_2']);
    await Promise.all([stopping, pass]);
    expect(started).toEqual([]);
  });

  it('joins a second run for the same id to the one under way', async () => {
    const steps = stepsUnderWay();
    let runs = 0;
    const work = async () => {
      runs++;
      await new Promise((resolve) => setImmediate(resolve));
    };
    await Promise.all([steps.run('ep_1', work), steps.run('ep_1', work), steps.run('ep_2', work)]);
    expect(runs).toBe(2);
  });
});
