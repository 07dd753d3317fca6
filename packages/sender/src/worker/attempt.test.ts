import { generateSecret, sign, signStandardWebhook } from '@linkhooks/protocol';
import { describe, expect, it } from 'vitest';
import type { ClaimedDelivery } from '../store/records.js';
import { deliveryHeaders } from './attempt.js';

const secret = generateSecret();
const body = new TextEncoder().encode('{"type":"click.created"}');
const NOW = Date.UTC(2026, 0, 2, 3, 4, 5, 678);

const claimOf = (test: boolean, standardWebhooks: boolean): ClaimedDelivery => ({
  delivery: {
    id: 'dlv_1',
    eventId: 'evt_1',
    endpointId: 'ep_1',
    accountId: 'acct_1',
    eventName: 'click.created',
    status: 'pending',
    attempts: 2,
    nextAttemptAt: NOW,
    lastFailureKind: null,
    lastStatusCode: null,
    test,
    createdAt: NOW,
    updatedAt: NOW,
  },
  leaseToken: 'token',
  leaseExpiresAt: NOW + 60_000,
  body,
  url: 'https://receiver.example/hooks',
  origin: 'https://receiver.example',
  secret,
  previousSecret: null,
  previousSecretExpiresAt: null,
  standardWebhooks,
});

describe('deliveryHeaders', () => {
  it('writes the signature, then the ids, the attempt and the user agent, in that order', () => {
    const headers = deliveryHeaders(claimOf(false, false), 3, 'linkhooks/1.0', NOW);
    expect(Object.entries(headers)).toEqual([
      ['content-type', 'application/json'],
      ['x-service-signature', sign(body, secret)],
      ['x-service-event-id', 'evt_1'],
      ['x-service-delivery-id', 'dlv_1'],
      ['x-service-attempt', '3'],
      ['user-agent', 'linkhooks/1.0'],
    ]);
  });

  it('adds the Standard Webhooks three after the signature, and marks a test delivery last', () => {
    const headers = deliveryHeaders(claimOf(true, true), 1, 'linkhooks/1.0', NOW);
    const timestamp = Math.floor(NOW / 1000);
    expect(Object.entries(headers)).toEqual([
      ['content-type', 'application/json'],
      ['x-service-signature', sign(body, secret)],
      ['webhook-id', 'evt_1'],
      ['webhook-timestamp', String(timestamp)],
      ['webhook-signature', signStandardWebhook({ id: 'evt_1', timestamp, body, secret: [secret] })],
      ['x-service-event-id', 'evt_1'],
      ['x-service-delivery-id', 'dlv_1'],
      ['x-service-attempt', '1'],
      ['user-agent', 'linkhooks/1.0'],
      ['x-service-test', '1'],
    ]);
  });

  it('gives each attempt an object of its own', () => {
    const claim = claimOf(false, false);
    const first = deliveryHeaders(claim, 1, 'linkhooks/1.0', NOW);
    const second = deliveryHeaders(claim, 2, 'linkhooks/1.0', NOW);
    expect(second).not.toBe(first);
    expect(first['x-service-attempt']).toBe('1');
  });
});
