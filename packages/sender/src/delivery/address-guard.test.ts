import type { LookupAddress, LookupOptions } from 'node:dns';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestCertificates } from '../../test/helpers/test-ca.mjs';
import {
  type AddressPolicy,
  BlockedAddressError,
  checkAddress,
  checkUrl,
  createGuardedLookup,
  type LookupFunction,
  rangeInWords,
} from './address-guard.js';

const STRICT: AddressPolicy = { allowPrivateNetworks: false };
const DEV: AddressPolicy = { allowPrivateNetworks: true };

type Answer = string | LookupAddress[];

/** Runs a lookup function to completion. */
function runLookup(lookup: LookupFunction, hostname: string, options: LookupOptions = {}) {
  return new Promise<{ address: Answer; family: number | undefined }>((resolve, reject) => {
    lookup(hostname, options, (err, address, family) => (err ? reject(err) : resolve({ address, family })));
  });
}

/** A resolver that answers from a table, as dns.lookup would, for each call in turn. */
function scriptedResolver(...calls: string[][]): { resolve: LookupFunction; calls: () => number } {
  let n = 0;
  const resolve: LookupFunction = (_hostname, options, callback) => {
    const addresses = calls[Math.min(n++, calls.length - 1)] ?? [];
    const answers = addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    queueMicrotask(() => {
      if (options.all) callback(null, answers);
      else callback(null, answers[0]?.address ?? '', answers[0]?.family);
    });
  };
  return { resolve, calls: () => n };
}

function causeChain(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let e = error; e && chain.length < 10; e = (e as { cause?: unknown }).cause) chain.push(e);
  return chain;
}

describe('checkAddress', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.1.1', 'linkLocal'],
    ['169.254.169.254', 'metadata'], // cloud metadata
    ['100.64.0.1', 'carrierGradeNat'],
    ['100.127.255.255', 'carrierGradeNat'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.255', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.2.1', 'reserved'], // TEST-NET-1
    ['198.51.100.1', 'reserved'], // TEST-NET-2
    ['203.0.113.1', 'reserved'], // TEST-NET-3
    ['198.18.0.1', 'reserved'], // benchmarking
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fc00::1', 'uniqueLocal'],
    ['fd12:3456::1', 'uniqueLocal'],
    ['fe80::1', 'linkLocal'],
    ['fe80::1%eth0', 'linkLocal'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'ipv4Mapped:loopback'],
    ['::ffff:10.0.0.1', 'ipv4Mapped:private'],
    ['::ffff:7f00:1', 'ipv4Mapped:loopback'],
    ['0:0:0:0:0:ffff:a9fe:a9fe', 'metadata'],
    ['::ffff:0.0.0.0', 'ipv4Mapped:unspecified'],
    ['::ffff:0:127.0.0.1', 'rfc6145'],
    ['64:ff9b::7f00:1', 'rfc6052'], // NAT64 of 127.0.0.1
    ['64:ff9b::808:808', 'rfc6052'], // NAT64 of a public address: refused too, conservatively
    ['2002:7f00:1::', '6to4'],
    ['2001::1', 'teredo'],
    ['2001:db8::1', 'reserved'], // documentation
    ['fec0::1', 'deprecatedSiteLocal'],
    ['100::1', 'discard'],
    // ipaddr.js calls these 'unicast'; they lie outside 2000::/3, so we refuse them.
    ['::7f00:1', 'reserved'], // IPv4-compatible ::127.0.0.1 in hex
    ['::127.0.0.1', 'reserved'], // ipaddr.js would misread this as ::ffff:127.0.0.1
    ['::8.8.8.8', 'reserved'],
    ['::2', 'reserved'],
    ['e000::1', 'reserved'],
  ])('refuses %s (%s)', (ip, reason) => {
    expect(checkAddress(ip, STRICT)).toEqual({ allowed: false, reason });
  });

  it.each(['127.1', '0x7f000001', '2130706433', '010.0.0.1', 'localhost', '', '1.2.3.4.5', '[::1]'])(
    'refuses the non-canonical or non-IP string %j as invalid',
    (ip) => {
      expect(checkAddress(ip, STRICT)).toEqual({ allowed: false, reason: 'invalid' });
      expect(checkAddress(ip, DEV)).toEqual({ allowed: false, reason: 'invalid' });
    },
  );

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '203.0.114.1',
    '93.184.215.14',
    '2606:4700:4700::1111',
    '2a00:1450:4001::1',
    '::ffff:8.8.8.8',
  ])('allows the public address %s', (ip) => {
    expect(checkAddress(ip, STRICT)).toEqual({ allowed: true });
  });

  it.each([
    '127.0.0.1',
    '10.0.0.1',
    '192.168.1.1',
    '172.16.0.1',
    '169.254.1.1',
    '100.64.0.1',
    '::1',
    'fd00::1',
    'fe80::1',
    '::ffff:127.0.0.1',
  ])('allows %s with allowPrivateNetworks', (ip) => {
    expect(checkAddress(ip, DEV)).toEqual({ allowed: true });
  });

  it.each([
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['::', 'unspecified'],
    ['ff02::1', 'multicast'],
    ['::ffff:0.0.0.0', 'ipv4Mapped:unspecified'],
    ['64:ff9b::7f00:1', 'rfc6052'],
  ])('still refuses %s (%s) with allowPrivateNetworks', (ip, reason) => {
    expect(checkAddress(ip, DEV)).toEqual({ allowed: false, reason });
  });
});

describe('checkUrl', () => {
  it.each([
    ['https://127.0.0.1/', 'loopback'],
    ['https://2130706433/', 'loopback'], // decimal
    ['https://0x7f000001/', 'loopback'], // hex
    ['https://0177.0.0.1/', 'loopback'], // octal
    ['https://127.1/', 'loopback'], // short
    ['https://0x7f.0.0.1/', 'loopback'],
    ['https://127.0.0.1./', 'loopback'],
    ['https://%31%32%37.0.0.1/', 'loopback'],
    ['https://127\u30020\u30020\u30021/', 'loopback'], // ideographic full stops
    ['https://0/', 'unspecified'],
    ['https://169.254.169.254/latest/meta-data/', 'metadata'],
    ['https://10.0.0.1:8443/hook', 'private'],
    ['https://[::1]/', 'loopback'],
    ['https://[::]/', 'unspecified'],
    ['https://[fd12:3456::1]/', 'uniqueLocal'],
    ['https://[::ffff:127.0.0.1]/', 'ipv4Mapped:loopback'],
    ['https://[::ffff:7f00:1]/', 'ipv4Mapped:loopback'],
    ['https://[::127.0.0.1]/', 'reserved'],
  ])('refuses the IP-literal URL %s (%s)', (url, reason) => {
    const result = checkUrl(url, STRICT);
    expect(result).toEqual({ ok: false, reason: expect.any(String), range: reason });
    // In words a customer reads, never the range's name (`ipv4Mapped:loopback`, `uniqueLocal`).
    if (!result.ok) {
      expect(result.reason).toMatch(/^address \S+ is .+, not one on the public internet$/);
      expect(result.reason).toContain(rangeInWords(reason));
      expect(result.reason).not.toMatch(/[a-z][A-Z]|:loopback/);
    }
  });

  it('says each range in words of its own, and the rest as reserved for a special purpose', () => {
    expect(rangeInWords('private')).toBe('a private network address');
    expect(rangeInWords('ipv4Mapped:private')).toBe(
      'an IPv4 address in IPv6 form, and that IPv4 address is a private network address',
    );
    expect(rangeInWords('teredo')).toBe('reserved for a special purpose');
    expect(checkUrl('https://[2002::1]/', STRICT)).toEqual({
      ok: false,
      reason: 'address 2002::1 is reserved for a special purpose, not one on the public internet',
      range: '6to4',
    });
    const words = [
      'loopback',
      'private',
      'linkLocal',
      'uniqueLocal',
      'carrierGradeNat',
      'unspecified',
      'multicast',
      'broadcast',
      'reserved',
      'metadata',
    ].map(rangeInWords);
    expect(new Set(words).size).toBe(words.length);
    for (const w of words) expect(w).not.toBe('reserved for a special purpose');
  });

  it.each([
    ['http://hooks.example.com/', 'http:'],
    ['ftp://hooks.example.com/', 'ftp:'],
    ['file:///etc/passwd', 'file:'],
    ['javascript:alert(1)', 'javascript:'],
    ['wss://hooks.example.com/', 'wss:'],
  ])('refuses the non-https URL %s, in any policy', (url, scheme) => {
    for (const policy of [STRICT, DEV]) {
      const result = checkUrl(url, policy);
      expect(result).toEqual({ ok: false, reason: expect.stringContaining(`scheme ${scheme}`) });
      if (!result.ok) expect(result.reason).toContain('https');
    }
  });

  it.each([
    'https://user:pw@hooks.example.com/',
    'https://user@hooks.example.com/',
    'https://:pw@hooks.example.com/',
  ])('refuses credentials in %s', (url) => {
    expect(checkUrl(url, STRICT)).toEqual({ ok: false, reason: expect.stringContaining('credentials') });
  });

  it.each([
    '',
    'not a url',
    'https://',
    'https://[::1',
    '//hooks.example.com/',
    'https://exa mple.com/',
    'https://1.2.3.4.5/',
    'https://256.0.0.1/',
  ])('refuses the garbage string %j', (url) => {
    expect(checkUrl(url, STRICT)).toEqual({ ok: false, reason: 'not an absolute URL' });
  });

  it('accepts https URLs with a public address or a host name, and returns the parsed URL', () => {
    const named = checkUrl('HTTPS://Hooks.Example.com:8443/in?x=1', STRICT);
    expect(named.ok && named.url.href).toBe('https://hooks.example.com:8443/in?x=1');
    expect(checkUrl('https://8.8.8.8/', STRICT).ok).toBe(true);
    expect(checkUrl('https://[2606:4700:4700::1111]/', STRICT).ok).toBe(true);
    // A name is judged at connect time, on the address it resolves to then.
    expect(checkUrl('https://localhost/', STRICT).ok).toBe(true);
  });

  it('allows private literals only with allowPrivateNetworks, never 0.0.0.0', () => {
    expect(checkUrl('https://127.0.0.1:8443/', DEV).ok).toBe(true);
    expect(checkUrl('https://[::1]/', DEV).ok).toBe(true);
    expect(checkUrl('https://10.0.0.1/', DEV).ok).toBe(true);
    expect(checkUrl('https://0.0.0.0/', DEV)).toEqual({
      ok: false,
      reason: expect.stringContaining('unspecified'),
      range: 'unspecified',
    });
    expect(checkUrl('https://224.0.0.1/', DEV)).toEqual({
      ok: false,
      reason: expect.stringContaining('multicast'),
      range: 'multicast',
    });
  });
});

describe('cloud metadata addresses', () => {
  it.each([
    '169.254.169.254',
    '169.254.170.2',
    '169.254.169.253',
    '100.100.100.200',
    'fd00:ec2::254',
    'fd00:ec2:0:0:0:0:0:254',
    '::ffff:169.254.169.254',
    '169.254.170.23',
    'fd00:ec2::23',
    'fd00:c1::a9fe:a9fe',
    'fd00:c1:0:0:0:0:a9fe:a9fe',
  ])('refuses %s even with allowPrivateNetworks', (ip) => {
    expect(checkAddress(ip, DEV)).toEqual({ allowed: false, reason: 'metadata' });
    expect(checkAddress(ip, STRICT)).toEqual({ allowed: false, reason: 'metadata' });
  });

  it('still opens the rest of link-local and CGNAT for development', () => {
    expect(checkAddress('169.254.1.1', DEV)).toEqual({ allowed: true });
    expect(checkAddress('100.64.0.1', DEV)).toEqual({ allowed: true });
  });
});

describe('createGuardedLookup', () => {
  it('fails a name that resolves to loopback with a BlockedAddressError', async () => {
    const { resolve } = scriptedResolver(['127.0.0.1']);
    const error = await runLookup(createGuardedLookup(STRICT, resolve), 'evil.example').catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(BlockedAddressError);
    expect(error).toMatchObject({
      code: 'LINKHOOKS_BLOCKED_ADDRESS',
      hostname: 'evil.example',
      address: '127.0.0.1',
      reason: 'loopback',
    });
    // What the customer's delivery log shows: their host, not what it resolved to.
    expect((error as Error).message).toContain('evil.example');
    expect((error as Error).message).not.toContain('127.0.0.1');
  });

  it('passes public answers through unchanged, single and all', async () => {
    const { resolve } = scriptedResolver(['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c']);
    const lookup = createGuardedLookup(STRICT, resolve);
    expect(await runLookup(lookup, 'example.com')).toEqual({ address: '93.184.215.14', family: 4 });
    expect(await runLookup(lookup, 'example.com', { all: true })).toEqual({
      address: [
        { address: '93.184.215.14', family: 4 },
        { address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 },
      ],
      family: undefined,
    });
  });

  it('refuses at the second lookup when the name rebinds to a private address', async () => {
    const { resolve, calls } = scriptedResolver(['93.184.215.14'], ['10.0.0.5']);
    const lookup = createGuardedLookup(STRICT, resolve);
    // At endpoint creation the name is public...
    await expect(runLookup(lookup, 'rebind.example')).resolves.toEqual({
      address: '93.184.215.14',
      family: 4,
    });
    // ...at delivery time it answers a private address, and the connection is refused.
    const error = await runLookup(lookup, 'rebind.example').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BlockedAddressError);
    expect(error).toMatchObject({ address: '10.0.0.5', reason: 'private' });
    expect(calls()).toBe(2);
  });

  it('fails the whole lookup when any one of several addresses is refused', async () => {
    const { resolve } = scriptedResolver(['8.8.8.8', '2606:4700:4700::1111', '169.254.169.254', '1.1.1.1']);
    const error = await runLookup(createGuardedLookup(STRICT, resolve), 'mixed.example', { all: true }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(BlockedAddressError);
    expect(error).toMatchObject({ address: '169.254.169.254', reason: 'metadata' });
  });

  it('refuses an answer that is not an IP address', async () => {
    const { resolve } = scriptedResolver(['not-an-ip']);
    await expect(runLookup(createGuardedLookup(DEV, resolve), 'odd.example')).rejects.toMatchObject({
      reason: 'invalid',
    });
  });

  it('passes resolver errors through untouched', async () => {
    const notFound = Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.invalid'), { code: 'ENOTFOUND' });
    const failing: LookupFunction = (_h, _o, callback) => queueMicrotask(() => callback(notFound, ''));
    await expect(runLookup(createGuardedLookup(STRICT, failing), 'nowhere.invalid')).rejects.toBe(notFound);
  });

  it('uses dns.lookup by default', async () => {
    await expect(runLookup(createGuardedLookup(STRICT), 'localhost', { all: true })).rejects.toBeInstanceOf(
      BlockedAddressError,
    );
    const { address } = await runLookup(createGuardedLookup(DEV), 'localhost', { all: true });
    expect(Array.isArray(address) && address.length).toBeGreaterThan(0);
  });
});

describe('the guarded lookup in a real undici connection', () => {
  let server: Server;
  let ca: string;
  let port: number;
  let connections = 0;
  let requests = 0;

  beforeAll(async () => {
    const certs = createTestCertificates();
    ca = certs.ca;
    server = createServer({ key: certs.key, cert: certs.cert }, (_req, res) => {
      requests++;
      res.end('ok');
    });
    server.on('connection', () => connections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
  });

  it('refuses localhost at connect time, and reaches it only with allowPrivateNetworks', async () => {
    const strict = new Agent({ connect: { lookup: createGuardedLookup(STRICT), ca } });
    const dev = new Agent({ connect: { lookup: createGuardedLookup(DEV), ca } });
    try {
      const error = await strict
        .request({ origin: `https://localhost:${port}`, path: '/', method: 'GET' })
        .then(
          () => null,
          (e: unknown) => e,
        );
      const blocked = causeChain(error).find((e) => e instanceof BlockedAddressError);
      expect(blocked).toMatchObject({
        code: 'LINKHOOKS_BLOCKED_ADDRESS',
        hostname: 'localhost',
        reason: 'loopback',
      });
      // Refused before the socket connected: the server saw neither a connection nor a request.
      expect({ connections, requests }).toEqual({ connections: 0, requests: 0 });

      const ok = await dev.request({ origin: `https://localhost:${port}`, path: '/', method: 'GET' });
      expect(ok.statusCode).toBe(200);
      expect(await ok.body.text()).toBe('ok');
      expect(requests).toBe(1);

      // net.connect never calls lookup for an IP literal: the strict agent reaches 127.0.0.1 when
      // given it directly. That gap is why checkUrl checks literal hosts before any request.
      const literal = `https://127.0.0.1:${port}/`;
      const direct = await strict.request({ origin: new URL(literal).origin, path: '/', method: 'GET' });
      await direct.body.dump();
      expect(direct.statusCode).toBe(200);
      expect(requests).toBe(2);
      expect(checkUrl(literal, STRICT)).toEqual({
        ok: false,
        reason: 'address 127.0.0.1 is a loopback address, not one on the public internet',
        range: 'loopback',
      });
    } finally {
      await Promise.all([strict.close(), dev.close()]);
    }
  });
});
