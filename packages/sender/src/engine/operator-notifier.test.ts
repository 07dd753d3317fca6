import { describe, expect, it } from 'vitest';
import type { ClaimedNotice } from '../store/notice-port.js';
import { inOrderPerEndpoint } from './operator-notifier.js';

const notice = (id: string, type: ClaimedNotice['type'], endpointId: string): ClaimedNotice => ({
  id,
  type,
  body: new TextEncoder().encode(JSON.stringify({ type, endpoint_id: endpointId })),
  attempts: 0,
  leaseToken: 'lease',
});

describe('inOrderPerEndpoint', () => {
  it("sends one endpoint's notices oldest first, whatever order they were claimed in", () => {
    const groups = inOrderPerEndpoint([
      notice('ntc_02', 'endpoint.disabled', 'ep_a'),
      notice('ntc_03', 'endpoint.failing', 'ep_b'),
      notice('ntc_01', 'endpoint.failing', 'ep_a'),
    ]);
    expect(groups.map((g) => g.map((n) => `${n.id} ${n.type}`))).toEqual([
      ['ntc_01 endpoint.failing', 'ntc_02 endpoint.disabled'],
      ['ntc_03 endpoint.failing'],
    ]);
  });

  it('sends a notice whose body names no endpoint on its own', () => {
    const odd = { ...notice('ntc_09', 'endpoint.failing', 'x'), body: new Uint8Array([123]) };
    expect(inOrderPerEndpoint([odd, notice('ntc_01', 'endpoint.failing', 'ep_a')])).toHaveLength(2);
  });
});
