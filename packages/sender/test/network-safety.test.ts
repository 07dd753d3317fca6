/**
 * Network safety at the engine level (design D17): endpoints on unsafe addresses are
 * refused when created, and a name that resolves public when the endpoint is created but private
 * at delivery (DNS rebinding) is refused at connect time — the receiver never sees the request.
 */
import type { LookupAddress } from 'node:dns';
import { buildEvent } from '@linkhooks/receiver/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock, systemClock } from '../src/clock.js';
import { RETRY_DELAYS_MS } from '../src/domain/schedule.js';
import { createSender } from '../src/engine/sender.js';
import { createMemoryStore } from '../src/store/memory-store.js';
import { addEndpoint } from './helpers/endpoints.js';
import { type HttpsReceiver, startHttpsReceiver } from './helpers/https-receiver.js';

let receiver: HttpsReceiver;
beforeAll(async () => {
  receiver = await startHttpsReceiver();
});
afterAll(() => receiver.close());

const ACCOUNT = 'acct_net';

function safeSender(resolve?: Parameters<typeof createSender>[0]['resolve']) {
  return createSender({
    store: createMemoryStore(),
    clock: new ManualClock(),
    ca: receiver.certs.ca,
    ...(resolve ? { resolve } : {}),
  });
}

describe('endpoint URLs', () => {
  it.each([
    'https://localhost/hook',
    'https://127.0.0.1/hook',
    'https://10.0.0.8/hook',
    'https://192.168.1.1/hook',
    'https://169.254.169.254/latest/meta-data',
    'https://[::1]/hook',
    'https://2130706433/hook',
    'https://0x7f000001/hook',
    'https://0177.0.0.1/hook',
    'https://127.1/hook',
    'https://[::ffff:127.0.0.1]/hook',
    'http://example.com/hook',
  ])('refuses %s when it is created', async (url) => {
    const sender = safeSender();
    await expect(sender.createEndpoint(ACCOUNT, { url, events: ['click'] })).rejects.toMatchObject({
      code: 'unsafe_url',
    });
    await sender.stop(0);
  });
});

describe('the refusal of a private address', () => {
  const refusal = async (url: string, resolve?: Parameters<typeof safeSender>[0]) => {
    const sender = safeSender(resolve);
    const refused = await sender.createEndpoint(ACCOUNT, { url, events: ['click'] }).then(
      () => null,
      (error: { code?: string; message: string }) => error,
    );
    await sender.stop(0);
    expect(refused?.code, `${url} was accepted`).toBe('unsafe_url');
    return refused?.message;
  };

  // A developer's receiver on their own machine or network: the flag that lets it through.
  it.each([
    'https://localhost/hook',
    'https://127.0.0.1/hook',
    'https://10.0.0.8/hook',
    'https://192.168.1.1/hook',
    'https://[::1]/hook',
    'https://[::ffff:127.0.0.1]/hook',
  ])('says how development allows %s', async (url) => {
    expect(await refusal(url)).toMatch(/--allow-private-networks/);
  });

  // A name is judged by every address it resolves to: the flag is named only for the machine's own
  // (loopback), which tells a customer nothing of the platform's network.
  it.each([
    [['127.0.0.1'], true],
    [['127.0.0.1', '::1'], true],
    [['10.0.0.1'], false],
    [['10.0.0.1', '192.168.1.1'], false],
    [['127.0.0.1', '169.254.169.254'], false],
    [['8.8.8.8', '224.0.0.1'], false],
  ])('names the flag for a name resolving to %j: %s', async (answers, named) => {
    const message = await refusal('https://hooks.internal.test/hook', (_host, _options, callback) =>
      callback(
        null,
        answers.map((address) => ({ address, family: 4 })),
      ),
    );
    expect(message?.includes('--allow-private-networks')).toBe(named);
  });

  it('refuses a name that does not exist and one inside the network in the same words', async () => {
    const missing = safeSender((host, _options, callback) =>
      callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' }), ''),
    );
    const notFound = await missing
      .createEndpoint(ACCOUNT, { url: 'https://db.internal.test/hook', events: ['click'] })
      .catch((error: { code: string; message: string }) => error);
    await missing.stop(0);
    const internal = await refusal('https://db.internal.test/hook', (_host, _options, callback) =>
      callback(null, [{ address: '10.1.2.3', family: 4 }]),
    );
    // The same code (refusal() checks it is unsafe_url) and the same words.
    expect(notFound).toMatchObject({ code: 'unsafe_url', message: internal });
    expect(internal).toBe('url host db.internal.test does not resolve to an address on the public internet');
  });

  // The flag opens none of these: naming it would send the developer the wrong way.
  it.each([
    'https://169.254.169.254/latest/meta-data',
    'https://0.0.0.0/hook',
    'https://224.0.0.1/hook',
    'http://example.com/hook',
  ])('names no flag for %s', async (url) => {
    expect(await refusal(url)).not.toMatch(/allow-private-networks/);
  });
});

describe('DNS rebinding', () => {
  it('refuses at connect time a name that resolved public when the endpoint was created', async () => {
    let calls = 0;
    const answers: LookupAddress[][] = [[{ address: '8.8.8.8', family: 4 }]];
    const sender = safeSender((_host, options, callback) => {
      const answer = answers[calls++] ?? [{ address: '127.0.0.1', family: 4 }];
      if (options.all) callback(null, answer);
      else callback(null, answer[0]!.address, answer[0]!.family);
    });
    await addEndpoint(sender, receiver, { account: ACCOUNT, route: 'rebind', host: 'rebind.test' });
    const { event, data } = buildEvent('click');
    const { deliveries } = await sender.publish(ACCOUNT, { event, data });
    await sender.tick();
    const { attempts } = await sender.getDelivery(ACCOUNT, deliveries[0]!.id);
    expect(calls).toBeGreaterThanOrEqual(2);
    expect(attempts[0]).toMatchObject({ failureKind: 'dns', statusCode: null });
    // The log names the host, never what it resolved to (a map of the platform's network).
    expect(attempts[0]!.errorMessage).toMatch(/rebind\.test/);
    expect(attempts[0]!.errorMessage).not.toMatch(/127\.0\.0\.1/);
    expect(receiver.hits.filter((h) => h.route === 'rebind')).toHaveLength(0);
    await sender.stop(0);
  });

  it('logs a name gone from the DNS and one that now leads inside the network as the same failure', async () => {
    // Both resolve publicly when made; then one is gone, the other leads to a private address:
    // the first answered by the DNS a little later, the second at once, as from the hosts file.
    let made = false;
    const sender = createSender({
      store: createMemoryStore(),
      clock: systemClock,
      ca: receiver.certs.ca,
      resolve: (host, options, callback) => {
        const answer = !made
          ? [{ address: '8.8.8.8', family: 4 }]
          : host.startsWith('inside')
            ? [{ address: '10.20.30.40', family: 4 }]
            : null;
        if (!answer) {
          const gone = Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
          setTimeout(() => callback(gone, options.all ? [] : '', 4), 40);
        } else if (options.all) callback(null, answer);
        else callback(null, answer[0]!.address, answer[0]!.family);
      },
    });
    await addEndpoint(sender, receiver, { account: ACCOUNT, route: 'inside', host: 'inside.test' });
    await addEndpoint(sender, receiver, { account: ACCOUNT, route: 'gone', host: 'gone.test' });
    made = true;
    const { event, data } = buildEvent('click');
    const { deliveries } = await sender.publish(ACCOUNT, { event, data });
    await sender.tick();
    const logged = await Promise.all(
      deliveries.map(async (d) => (await sender.getDelivery(ACCOUNT, d.id)).attempts[0]!),
    );
    const told = logged.map((a) => ({
      kind: a.failureKind,
      words: a.errorMessage?.replace(/inside\.test|gone\.test/, 'HOST'),
    }));
    expect(told).toEqual([
      { kind: 'dns', words: 'HOST does not resolve to an address on the public internet' },
      { kind: 'dns', words: 'HOST does not resolve to an address on the public internet' },
    ]);
    // Nor does the time tell them apart: neither made a request, and the retry is due a whole
    // first delay after the attempt's start.
    expect(logged.map((a) => [a.durationMs, a.nextAttemptAt! - a.startedAt])).toEqual([
      [0, RETRY_DELAYS_MS[0]],
      [0, RETRY_DELAYS_MS[0]],
    ]);
    expect(receiver.hits.filter((h) => h.route === 'inside' || h.route === 'gone')).toHaveLength(0);
    await sender.stop(0);
  });
});
