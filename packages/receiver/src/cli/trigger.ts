/**
 * `linkhooks trigger`: one signed, schema-valid sample delivery, as the service sends it: signed
 * over the body, and with `--scheme standard-webhooks` in the Standard Webhooks form as well.
 */
import { EVENT_NAMES, type EventName, isEventName, unusableSecret } from '@linkhooks/protocol';
import type { Scheme } from '../scheme.js';
import { buildEvent, signedDelivery } from '../testing.js';

export interface TriggerOptions {
  event: string;
  url: string;
  secret: string;
  /** Fields that replace the sample data's (JSON object). */
  data?: Record<string, unknown>;
  timeoutMs?: number;
  /** `'standard-webhooks'` adds the webhook-* headers, as an endpoint with Standard Webhooks on gets them. */
  scheme?: Scheme;
  /** Send it as a test delivery (`X-Service-Test: 1`). */
  test?: boolean;
}

export interface TriggerResult {
  ok: boolean;
  status: number | null;
  body: string;
  ms: number;
  error?: string;
  eventId: string;
  sent: string;
}

export class TriggerError extends Error {
  override readonly name = 'TriggerError';
}

export function checkTrigger(event: string, url: string): EventName {
  if (!isEventName(event))
    throw new TriggerError(`unknown event "${event}": one of ${EVENT_NAMES.join(', ')}`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TriggerError(`--url is not a URL: ${url}`);
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')
    throw new TriggerError('--url must be http(s)');
  return event;
}

export async function trigger(options: TriggerOptions): Promise<TriggerResult> {
  const name = checkTrigger(options.event, options.url);
  let event: ReturnType<typeof buildEvent>;
  try {
    event = buildEvent(name, options.data ? { data: options.data as never } : {});
  } catch (error) {
    // buildEvent names the field and what it must be: said here of --data, not of its overrides.
    const why = (error as Error).message.replace(
      /^buildEvent\([^)]*\): the overrides make the event invalid /,
      '',
    );
    throw new TriggerError(`--data does not make a valid ${name} event: ${why}`);
  }
  let delivery: { body: string; headers: Record<string, string> };
  try {
    delivery = signedDelivery({
      secret: options.secret,
      event,
      ...(options.scheme ? { scheme: options.scheme } : {}),
      ...(options.test ? { test: true } : {}),
    });
  } catch (error) {
    // Whatever the scheme, a blank or unset secret is said as such before its form is.
    const unusable = unusableSecret(options.secret);
    if (unusable) throw new TriggerError(`the secret cannot sign: ${unusable}`);
    if (options.scheme === 'standard-webhooks') {
      throw new TriggerError(
        'the Standard Webhooks form needs the endpoint secret as shown: whsec_ followed by base64',
      );
    }
    throw error;
  }
  const { body, headers } = delivery;
  const started = performance.now();
  const eventId = headers['x-service-event-id']!;
  try {
    const response = await fetch(options.url, {
      method: 'POST',
      headers,
      body,
      redirect: 'manual', // the service never follows redirects: neither does its stand-in
      signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
    });
    const text = (await response.text()).slice(0, 4096);
    const ms = Math.round(performance.now() - started);
    return {
      ok: response.status >= 200 && response.status < 300,
      status: response.status,
      body: text,
      ms,
      eventId,
      sent: body,
    };
  } catch (error) {
    const ms = Math.round(performance.now() - started);
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const message =
      (error as Error).name === 'TimeoutError'
        ? `no answer within ${options.timeoutMs ?? 30_000} ms (the service counts that as a failure)`
        : `${cause?.code ?? ''} ${cause?.message ?? (error as Error).message}`.trim();
    return { ok: false, status: null, body: '', ms, error: message, eventId, sent: body };
  }
}
