import { createSocket, type Socket } from 'node:dgram';
import type { LookupAddress } from 'node:dns';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LookupFunction } from './address-guard.js';
import { classifyError } from './failure-kind.js';
import { createResolverLookup, parseHosts } from './resolver-lookup.js';

/**
 * A name server on a loopback port: `good.test` has an IPv4 address and no IPv6 one, `both.test`
 * one of each, `nx.test` does not exist, and a name under `hole.test` is never answered (a tenant's
 * name server that does not reply). Counts the questions it was asked.
 */
async function nameServer() {
  const socket: Socket = createSocket('udp4');
  const asked: string[] = [];
  socket.on('message', (query, from) => {
    const labels: string[] = [];
    let at = 12;
    while (query[at]! > 0) {
      labels.push(query.subarray(at + 1, at + 1 + query[at]!).toString());
      at += 1 + query[at]!;
    }
    const name = labels.join('.').toLowerCase();
    const type = query.readUInt16BE(at + 1);
    const question = query.subarray(12, at + 5);
    asked.push(`${name} ${type === 1 ? 'A' : 'AAAA'}`);
    if (name.endsWith('hole.test')) return;
    if (name === 'noaaaa.test' && type === 28) return; // a server that drops AAAA questions
    const rdata =
      type === 1 && (name === 'good.test' || name === 'both.test' || name === 'noaaaa.test')
        ? Buffer.from([203, 0, 113, 5])
        : type === 28 && name === 'both.test'
          ? Buffer.from('20010db8000000000000000000000005', 'hex')
          : null;
    const header = Buffer.alloc(12);
    query.copy(header, 0, 0, 2); // its id
    // An answer; NXDOMAIN for nx.test, SERVFAIL for fail.test.
    header.writeUInt16BE(name === 'nx.test' ? 0x8183 : name === 'fail.test' ? 0x8182 : 0x8180, 2);
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(rdata ? 1 : 0, 6);
    const answer = rdata
      ? Buffer.concat([Buffer.from([0xc0, 12, 0, type, 0, 1, 0, 0, 0, 60, 0, rdata.length]), rdata])
      : Buffer.alloc(0);
    socket.send(Buffer.concat([header, question, answer]), from.port, from.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return { server: `127.0.0.1:${socket.address().port}`, asked, close: () => socket.close() };
}

type Result = { error: NodeJS.ErrnoException | null; addresses: LookupAddress[] | string };
const lookUp = (lookup: LookupFunction, host: string, options = { all: true }) =>
  new Promise<Result>((done) => lookup(host, options, (error, addresses) => done({ error, addresses })));

let dns: Awaited<ReturnType<typeof nameServer>>;
let dir: string;
let hostsFile: string;
beforeAll(async () => {
  dns = await nameServer();
  dir = mkdtempSync(join(tmpdir(), 'linkhooks-hosts-'));
  hostsFile = join(dir, 'hosts');
  writeFileSync(
    hostsFile,
    '127.0.0.1 localhost  Receiver.Local # a comment\n::1 localhost\n# 10.0.0.1 gone\n',
  );
});
afterAll(() => {
  dns.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A fallback that answers every name with one address and says which names it was asked. */
function recordingFallback() {
  const asked: string[] = [];
  const fallback: LookupFunction = (host, _options, callback) => {
    asked.push(host);
    callback(null, [{ address: '192.0.2.9', family: 4 }]);
  };
  return { asked, fallback };
}

describe('createResolverLookup', () => {
  it('answers from the DNS, every address IPv4 first, or the first alone', async () => {
    const lookup = createResolverLookup({ servers: [dns.server], hostsFile, timeoutMs: 2_000 });
    expect(await lookUp(lookup, 'both.test')).toEqual({
      error: null,
      addresses: [
        { address: '203.0.113.5', family: 4 },
        { address: '2001:db8::5', family: 6 },
      ],
    });
    expect((await lookUp(lookup, 'good.test')).addresses).toEqual([{ address: '203.0.113.5', family: 4 }]);
    const one = await new Promise((done) =>
      lookup('both.test', { family: 6 }, (error, address, family) => done({ error, address, family })),
    );
    expect(one).toEqual({ error: null, address: '2001:db8::5', family: 6 });
  });

  it('looks a name up while a hundred of another tenant’s names go unanswered', async () => {
    const lookup = createResolverLookup({ servers: [dns.server], hostsFile, timeoutMs: 2_000 });
    const settled: string[] = [];
    const holes = Array.from({ length: 100 }, (_, i) =>
      lookUp(lookup, `n${i}.hole.test`).then((r) => {
        settled.push('hole');
        return r;
      }),
    );
    const good = await lookUp(lookup, 'good.test');
    settled.push('good');
    expect(good.addresses).toEqual([{ address: '203.0.113.5', family: 4 }]);
    const unanswered = await Promise.all(holes);
    // The good name was answered before any unanswered one gave up: nothing queued it behind them.
    expect(settled[0]).toBe('good');
    for (const { error } of unanswered) {
      expect(error?.code).toBe('ETIMEOUT');
      expect(classifyError(error)).toBe('dns');
    }
  });

  it('answers from the hosts file first, names in any case, without asking the DNS', async () => {
    const lookup = createResolverLookup({ servers: [dns.server], hostsFile, timeoutMs: 2_000 });
    const before = dns.asked.length;
    expect((await lookUp(lookup, 'localhost')).addresses).toEqual([
      { address: '127.0.0.1', family: 4 },
      { address: '::1', family: 6 },
    ]);
    expect((await lookUp(lookup, 'receiver.local')).addresses).toEqual([{ address: '127.0.0.1', family: 4 }]);
    expect(dns.asked.length).toBe(before);
    expect(parseHosts('# only\n\nnot-an-address name\n')).toEqual(new Map());
  });

  it('asks the system’s resolver only for a name the DNS says does not exist', async () => {
    const { asked, fallback } = recordingFallback();
    const lookup = createResolverLookup({ servers: [dns.server], hostsFile, timeoutMs: 2_000, fallback });
    expect((await lookUp(lookup, 'nx.test')).addresses).toEqual([{ address: '192.0.2.9', family: 4 }]);
    await lookUp(lookup, 'good.test'); // found: no fallback
    const hole = await lookUp(lookup, 'x.hole.test'); // unanswered: a time-out, no fallback
    expect(hole.error?.code).toBe('ETIMEOUT');
    expect(asked).toEqual(['nx.test']);
  });

  it('answers ENOTFOUND for a name the DNS says does not exist, with no fallback (no private networks)', async () => {
    const lookup = createResolverLookup({ servers: [dns.server], hostsFile, timeoutMs: 2_000 });
    const { error } = await lookUp(lookup, 'nx.test');
    expect([error?.code, classifyError(error)]).toEqual(['ENOTFOUND', 'dns']);
  });

  it('fails a name its server refuses or fails as a look-up, never as a connection', async () => {
    const lookup = createResolverLookup({ servers: [dns.server], hostsFile, timeoutMs: 2_000 });
    const { error } = await lookUp(lookup, 'fail.test');
    expect([error?.code, classifyError(error)]).toEqual(['EAI_AGAIN', 'dns']);
    // A name server that cannot be reached at all (nothing listens there): c-ares says ECONNREFUSED.
    const unreachable = createResolverLookup({ servers: ['127.0.0.1:9'], hostsFile, timeoutMs: 2_000 });
    const refused = await lookUp(unreachable, 'good.test');
    expect(classifyError(refused.error)).toBe('dns');
    expect(refused.error?.message).not.toMatch(/ECONNREFUSED/);
  });

  it('answers with one family’s addresses when the other’s question goes unanswered', async () => {
    const lookup = createResolverLookup({ servers: [dns.server], hostsFile, timeoutMs: 2_000 });
    const settled: string[] = [];
    const noAaaa = lookUp(lookup, 'noaaaa.test').then((r) => {
      settled.push('noaaaa');
      return r;
    });
    const hole = lookUp(lookup, 'y.hole.test').then(() => settled.push('hole'));
    expect((await noAaaa).addresses).toEqual([{ address: '203.0.113.5', family: 4 }]);
    await hole;
    expect(settled).toEqual(['noaaaa', 'hole']); // answered well before the deadline
  });

  it('reads a name with a trailing dot from the hosts file too', async () => {
    const lookup = createResolverLookup({ servers: [dns.server], hostsFile, timeoutMs: 2_000 });
    expect((await lookUp(lookup, 'localhost.')).addresses).toEqual([
      { address: '127.0.0.1', family: 4 },
      { address: '::1', family: 6 },
    ]);
  });

  it('answers an IP address as itself', async () => {
    const lookup = createResolverLookup({ servers: [dns.server], hostsFile });
    expect((await lookUp(lookup, '198.51.100.7')).addresses).toEqual([
      { address: '198.51.100.7', family: 4 },
    ]);
  });
});
