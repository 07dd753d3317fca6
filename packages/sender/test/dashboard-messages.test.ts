/**
 * The dashboard's messages (dashboard/src/messages.ts, design D49): one for every SenderError code
 * and every failure kind, in plain words that show no validator text and cite no document.
 */
import { describe, expect, it } from 'vitest';
import {
  API_ERROR_MESSAGES,
  apiErrorMessage,
  attemptFailureMessage,
  FAILURE_MESSAGES,
  FILTERED_ENDPOINT_GONE,
  recoveredNote,
} from '../dashboard/src/messages.js';
import { FAILURE_KINDS } from '../src/domain/delivery-state.js';
import { REMAINING_COUNTED_AT_MOST } from '../src/domain/recovery.js';
import { SENDER_ERROR_STATUS } from '../src/errors.js';

const PLAIN = /^[A-Z][^<>=]*\.$/;
const attempt = (
  failure_kind: string | null,
  error_message: string | null,
  status_code: number | null = null,
) => ({
  failure_kind,
  error_message,
  status_code,
});

describe('messages', () => {
  it('has a plain message for every SenderError code and every failure kind', () => {
    expect(Object.keys(API_ERROR_MESSAGES).sort()).toEqual(Object.keys(SENDER_ERROR_STATUS).sort());
    expect(Object.keys(FAILURE_MESSAGES).sort()).toEqual([...FAILURE_KINDS].sort());
    for (const text of [
      ...Object.values(API_ERROR_MESSAGES),
      ...Object.values(FAILURE_MESSAGES),
      FILTERED_ENDPOINT_GONE,
    ]) {
      expect(text).toMatch(PLAIN);
      expect(text).not.toMatch(/design|RFC|\b[A-Z]{2,}_[A-Z_]+\b/);
    }
    for (const kind of FAILURE_KINDS)
      expect(attemptFailureMessage(attempt(kind, null, 500))).toMatch(/^Your /);
  });

  it('says which of a code’s causes it was, where the service names several', () => {
    const detail = (message: string) => apiErrorMessage('unsafe_url', undefined, message);
    expect(detail('url is not allowed: scheme http: is not allowed: the URL must use https')).toBe(
      'This URL cannot receive webhooks: it must start with https://.',
    );
    expect(detail('url host x resolves to an address that is not on the public internet')).toMatch(
      /public internet/,
    );
    expect(apiErrorMessage('invalid_request', undefined, 'since must not be in the future')).toBe(
      'The start date is in the future: choose one in the past.',
    );
    expect(apiErrorMessage('invalid_request', undefined, 'since must be before until')).toBe(
      'The start date must be before the end date.',
    );
    const endpoint = (message: string) => apiErrorMessage('invalid_endpoint', undefined, message);
    expect(
      apiErrorMessage(
        'unsafe_url',
        undefined,
        'url host hooks.exmaple.com does not resolve to an address on the public internet',
      ),
    ).toMatch(/domain name does not lead to an address on the public internet/);
    expect(endpoint('url host slow.example could not be looked up in time; try again')).toMatch(/in time/);
    expect(endpoint('url must not have a #fragment: it is never sent to the receiver (#a)')).toMatch(
      /^Remove the part of the URL from #/,
    );
    expect(endpoint('events must be a non-empty array of: click')).toBe(API_ERROR_MESSAGES.invalid_endpoint);
    // A cause is read only under its own code.
    expect(apiErrorMessage('invalid_request', undefined, 'url must use https')).toBe(
      API_ERROR_MESSAGES.invalid_request,
    );
  });

  it('never shows the validator’s text: a field at fault is named in words', () => {
    const details = [{ path: 'events', message: 'Too small: expected array to have >=1 items' }];
    expect(apiErrorMessage('invalid_request', details)).toBe('Check the events (choose at least one).');
    expect(apiErrorMessage('invalid_request', [{ path: 'weird.thing', message: 'x' }])).toBe(
      API_ERROR_MESSAGES.invalid_request,
    );
    expect(apiErrorMessage('no_such_code')).toBe(API_ERROR_MESSAGES.internal);
  });

  it('says what a recovery did and what is left, "at least" where the count stops', () => {
    expect(recoveredNote({ recovered: 1, remaining: 0 })).toBe(
      '1 failed delivery scheduled for one more attempt.',
    );
    expect(recoveredNote({ recovered: 1_000, remaining: 240 })).toBe(
      '1,000 failed deliveries scheduled for one more attempt. 240 more remain: recover again to continue.',
    );
    expect(recoveredNote({ recovered: 1_000, remaining: REMAINING_COUNTED_AT_MOST })).toMatch(
      /At least 100,000 more remain/,
    );
  });

  it('tells the wait the service asked for, in the unit that says it', () => {
    const wait = (code: string, seconds?: number) => apiErrorMessage(code, undefined, '', seconds);
    expect(wait('rate_limited', 1)).toBe('Too many requests in a short time. Try again in 1 second.');
    expect(wait('rate_limited', 59)).toBe('Too many requests in a short time. Try again in 59 seconds.');
    expect(wait('rate_limited', 60)).toBe('Too many requests in a short time. Try again in 1 minute.');
    expect(wait('quota_exceeded', 3_000)).toBe(
      'Your account has used its allowance for now. Try again in 50 minutes.',
    );
    expect(wait('quota_exceeded', 5_400)).toBe(
      'Your account has used its allowance for now. Try again in 2 hours.',
    );
    expect(wait('overloaded', 2)).toBe('The service is busy right now. Try again in 2 seconds.');
    // Without a wait, or for a code that never names one, the code's own message.
    expect(wait('rate_limited')).toBe(API_ERROR_MESSAGES.rate_limited);
    expect(wait('not_found', 5)).toBe(API_ERROR_MESSAGES.not_found);
    expect(API_ERROR_MESSAGES.rate_limited).not.toMatch(/minute/);
  });

  it('explains network codes and statuses behind a failed attempt', () => {
    expect(attemptFailureMessage(attempt('timeout', 'UND_ERR_HEADERS_TIMEOUT: Headers Timeout Error'))).toBe(
      'Your server accepted the connection but sent no response within 30 seconds.',
    );
    expect(attemptFailureMessage(attempt('timeout', 'no answer within 5000 ms'))).toBe(
      'Your server sent no answer within 5 seconds.',
    );
    expect(
      attemptFailureMessage(attempt('connect', 'ECONNREFUSED: connect ECONNREFUSED an address')),
    ).toMatch(/refused the connection/);
    expect(attemptFailureMessage(attempt('tls', 'CERT_HAS_EXPIRED: certificate has expired'))).toMatch(
      /expired/,
    );
    // A server offering only what deliveries refuse (finite-field Diffie-Hellman, TLS 1.0).
    expect(
      attemptFailureMessage(
        attempt(
          'tls',
          'ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE: ssl3_read_bytes:sslv3 alert handshake failure',
        ),
      ),
    ).toMatch(/TLS 1.3, or TLS 1.2 without requiring DHE/);
    expect(attemptFailureMessage(attempt('http_status', 'receiver answered 410', 410))).toMatch(/410 Gone/);
    // During a rotation's grace the signature is the previous secret's: a receiver holding only the
    // new one is refused, and the hint must not send it back to that one alone.
    expect(attemptFailureMessage(attempt('http_status', 'receiver answered 401', 401))).toMatch(
      /previous one: keep both/,
    );
    // A name gone and one leading inside the network are logged alike: so is what the page says.
    expect(
      attemptFailureMessage(
        attempt('dns', 'gone.test does not resolve to an address on the public internet'),
      ),
    ).toBe('Your server’s domain name does not lead to an address on the public internet.');
    // A 410 ends the deliveries only where the service disables on it: the record says which.
    const gone = { ...attempt('http_status', 'receiver answered 410', 410) };
    expect(attemptFailureMessage({ ...gone, next_attempt_at: null })).toMatch(/no more attempts/);
    expect(attemptFailureMessage({ ...gone, next_attempt_at: '2026-12-03T15:00:00Z' })).toMatch(
      /tried again on the schedule/,
    );
    // The connection's own limit, as the client words it.
    const connect =
      'UND_ERR_CONNECT_TIMEOUT: Connect Timeout Error (attempted address: x:443, timeout: 10000ms)';
    expect(attemptFailureMessage(attempt('timeout', connect))).toBe(
      'No connection to your server could be made within 10 seconds.',
    );
    expect(attemptFailureMessage(attempt('http_status', null, 503))).toMatch(/^Your server answered 503/);
    expect(attemptFailureMessage(attempt(null, null, 200))).toBeNull();
  });
});
