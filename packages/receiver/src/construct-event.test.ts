import { sign } from '@linkhooks/protocol';
import { describe, expect, it } from 'vitest';
import { constructEvent, constructEventAsync } from './construct-event.js';
import { isWebhookError, WebhookError } from './errors.js';

const secret = 'whsec_' + 'k'.repeat(43);
const click = {
  event: 'click',
  timestamp: '2026-11-22T10:00:00Z',
  data: {
    click_id: 'clk_1',
    link_id: 1,
    link_slug: 's',
    destination_url: 'https://example.com',
    ip: '203.0.113.1',
    country: 'DE',
    region: 'BE',
    city: 'Berlin',
    device: 'mobile',
    browser: 'Chrome',
    os: 'Android',
    referer: '',
    is_unique: false,
    fraud_flags: ['datacenter_ip', { any: 'shape' }],
  },
};

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return isWebhookError(error) ? error.code : `not a WebhookError: ${String(error)}`;
  }
  return undefined;
}

describe('constructEvent', () => {
  it('returns the typed event for a verified body, as bytes or as a string', () => {
    const body = JSON.stringify(click);
    for (const raw of [body, Buffer.from(body), new TextEncoder().encode(body)]) {
      const event = constructEvent(raw, sign(raw, secret), secret);
      expect(event).toEqual(click);
      if (event.event === 'click') expect(event.data.fraud_flags).toHaveLength(2);
    }
  });

  it('keeps fields it does not know (open schemas)', () => {
    const body = JSON.stringify({ ...click, version: 2, data: { ...click.data, new_field: 'x' } });
    const event = constructEvent(body, sign(body, secret), secret) as unknown as Record<string, unknown>;
    expect(event.version).toBe(2);
    expect((event.data as Record<string, unknown>).new_field).toBe('x');
  });

  it('throws a WebhookError with a stable code for each failure, verifying before parsing', () => {
    const body = JSON.stringify(click);
    expect(codeOf(() => constructEvent(body, undefined, secret))).toBe('missing_signature');
    expect(codeOf(() => constructEvent(body, 'abc', secret))).toBe('malformed_signature');
    expect(codeOf(() => constructEvent(body, sign(body, 'whsec_other'), secret))).toBe('invalid_signature');
    // A parsed object is refused before anything else: re-serialising it would be guesswork.
    expect(codeOf(() => constructEvent(click as never, sign(body, secret), secret))).toBe(
      'body_already_parsed',
    );
    expect(codeOf(() => constructEvent('not json', sign('not json', secret), secret))).toBe('invalid_json');
    expect(codeOf(() => constructEvent('', sign('', secret), secret))).toBe('invalid_json');
    const bad = Buffer.from([0x7b, 0xc3, 0x28, 0x7d]);
    expect(codeOf(() => constructEvent(bad, sign(bad, secret), secret))).toBe('invalid_json');
    const invalid = JSON.stringify({ ...click, timestamp: '2026-11-22T10:00:00.000Z' });
    expect(codeOf(() => constructEvent(invalid, sign(invalid, secret), secret))).toBe('invalid_payload');
  });

  it('puts the schema issues on invalid_payload and a hint on signature errors', () => {
    const body = JSON.stringify({ ...click, data: { ...click.data, is_unique: 'yes' } });
    try {
      constructEvent(body, sign(body, secret), secret);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(WebhookError);
      const e = error as WebhookError;
      expect(e.status).toBe(400);
      expect(e.message).toContain('data.is_unique');
      expect(e.details).toEqual([expect.objectContaining({ path: ['data', 'is_unique'] })]);
    }
    try {
      constructEvent(body, sign(body, secret), ` ${secret}`);
      expect.unreachable();
    } catch (error) {
      expect((error as WebhookError).hint).toMatch(/whitespace/);
    }
  });

  it('returns an unknown event name instead of throwing', () => {
    const body = JSON.stringify({ event: 'link.archived', timestamp: '2026-11-22T10:00:00Z', data: {} });
    expect(constructEvent(body, sign(body, secret), secret).event).toBe('link.archived');
  });

  it('has an async twin that agrees', async () => {
    const body = JSON.stringify(click);
    await expect(constructEventAsync(body, sign(body, secret), secret)).resolves.toEqual(click);
    await expect(constructEventAsync(body, sign(body, 'whsec_x'), secret)).rejects.toMatchObject({
      code: 'invalid_signature',
    });
  });
});

describe('isWebhookError', () => {
  it('judges by name and code, so a copy from another bundle still counts', () => {
    expect(isWebhookError(new WebhookError('invalid_json', 'x'))).toBe(true);
    expect(isWebhookError({ name: 'WebhookError', code: 'invalid_json' })).toBe(true);
    expect(isWebhookError({ name: 'WebhookError', code: 'made_up' })).toBe(false);
    expect(isWebhookError(new Error('x'))).toBe(false);
    expect(isWebhookError(null)).toBe(false);
  });
});
