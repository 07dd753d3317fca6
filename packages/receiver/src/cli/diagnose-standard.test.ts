import { generateSecret, sign, signStandardWebhook } from '@linkhooks/protocol';
import { describe, expect, it } from 'vitest';
import { diagnoseStandard } from './diagnose-standard.js';

const secret = generateSecret();
const NOW = 1_795_507_200;
const body = JSON.stringify({
  event: 'link.deleted',
  timestamp: '2026-11-24T08:00:00Z',
  data: { link_id: 1, slug: 'a' },
});
const bytes = (text: string) => new TextEncoder().encode(text);

function delivery(overrides: { timestamp?: number; key?: string; raw?: string } = {}) {
  const timestamp = overrides.timestamp ?? NOW;
  return {
    'webhook-id': 'evt_1',
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signStandardWebhook({
      id: 'evt_1',
      timestamp,
      body: overrides.raw ?? body,
      secret: overrides.key ?? secret,
    }),
    'x-service-signature': sign(overrides.raw ?? body, overrides.key ?? secret),
  };
}

const at = { now: NOW * 1000 };

describe('diagnoseStandard', () => {
  it('says valid, with the age of the timestamp', () => {
    const verdict = diagnoseStandard(bytes(body), delivery({ timestamp: NOW - 42 }), secret, at);
    expect(verdict).toEqual({
      valid: true,
      message: expect.stringMatching(/valid: .* 42 s old, within the 300 s/),
    });
  });

  it('notes that an earlier base64url secret must be rotated for Standard Webhooks libraries', () => {
    const legacy = `whsec_${'A'.repeat(42)}_`;
    const verdict = diagnoseStandard(bytes(body), delivery({ key: legacy }), legacy, at);
    expect(verdict.valid).toBe(true);
    expect(verdict.message).toMatch(/earlier form .* Rotate it/);
  });

  it('names the missing header and lists the ones that came', () => {
    const { 'webhook-timestamp': _, ...rest } = delivery();
    const verdict = diagnoseStandard(bytes(body), rest, secret, at);
    expect(verdict).toMatchObject({ valid: false, cause: 'missing_timestamp' });
    expect(verdict.message).toMatch(/webhook-timestamp header is missing.*got webhook-id, webhook-signature/);
  });

  it('gives the skew of a stale timestamp and whether the signature matches apart from it', () => {
    const stale = diagnoseStandard(bytes(body), delivery({ timestamp: NOW - 3600 }), secret, at);
    expect(stale).toMatchObject({ valid: false, cause: 'timestamp_out_of_tolerance' });
    expect(stale.message).toMatch(/3600 s old, beyond the 300 s tolerance.*signature itself matches.*--now/);
    const forged = { ...delivery({ timestamp: NOW + 900, key: generateSecret() }) };
    const ahead = diagnoseStandard(bytes(body), forged, secret, at);
    expect(ahead.message).toMatch(/900 s in the future.*does not match either/);
  });

  it('recognises a body-only delivery sent to a Standard Webhooks receiver', () => {
    const verdict = diagnoseStandard(bytes(body), { 'x-service-signature': sign(body, secret) }, secret, at);
    expect(verdict).toMatchObject({ valid: false, cause: 'body_only_signature' });
    expect(verdict.message).toMatch(/standard_webhooks: true.*default scheme would accept it/);
  });

  it.each([
    ['whitespace around the secret', () => [bytes(body), delivery(), `${secret}\n`], 'secret_whitespace'],
    ['a final newline', () => [bytes(`${body}\n`), delivery(), secret], 'trailing_newline'],
    [
      'a re-formatted body',
      () => [bytes(JSON.stringify(JSON.parse(body), null, 2)), delivery(), secret],
      'reformatted_body',
    ],
    [
      'a changed webhook-id',
      () => [bytes(body), { ...delivery(), 'webhook-id': 'evt_2' }, secret],
      'headers_altered',
    ],
    ['another secret', () => [bytes(body), delivery({ key: generateSecret() }), secret], 'wrong_secret'],
  ] as const)('explains %s', (_, input, cause) => {
    const [b, headers, key] = input() as [Uint8Array, Record<string, string>, string];
    expect(diagnoseStandard(b, headers, key, at)).toMatchObject({ valid: false, cause });
  });

  it('recognises a signer that keyed the HMAC with the text of the secret', () => {
    const content = `evt_1.${NOW}.${body}`;
    const asText = `v1,${Buffer.from(sign(content, secret), 'hex').toString('base64')}`;
    const verdict = diagnoseStandard(bytes(body), { ...delivery(), 'webhook-signature': asText }, secret, at);
    expect(verdict).toMatchObject({ valid: false, cause: 'secret_as_text' });
  });
});
