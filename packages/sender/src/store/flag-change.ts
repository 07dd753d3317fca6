/**
 * What a store answers for a change of an endpoint's flags that moved the first step of its
 * deliveries (design D34): the counts of that step, and whether more are left to move.
 */
import type { QueueMoved } from '../domain/queue-moves.js';
import type { Reenabled, Resumed, Settling } from './port.js';
import type { EndpointRecord } from './records.js';

type FirstStep = QueueMoved & { done: boolean };

export const resumedAnswer = (endpoint: EndpointRecord, moved: FirstStep | null): Resumed & Settling => ({
  endpoint,
  resumed: moved?.released ?? 0,
  settling: moved ? !moved.done : false,
});

export const reenabledAnswer = (
  endpoint: EndpointRecord,
  moved: FirstStep,
  noticed: boolean,
): Reenabled & Settling => ({
  endpoint,
  resumed: moved.released,
  replayed: moved.replayed,
  settling: !moved.done,
  ...(noticed ? { noticed: true } : {}),
});
