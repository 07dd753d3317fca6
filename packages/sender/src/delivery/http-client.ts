/**
 * Sends one attempt over HTTPS through undici keep-alive pools (design D13): the stored bytes,
 * 30 s for the whole attempt whatever the pool is doing, or for one that waited behind others for a
 * connection, 30 s for that wait and 30 s from its writing (design D24), the first 4 KiB of the
 * response kept (and at most 64 KiB read), redirects never followed, and every connection's address
 * checked at connect time (design D17).
 */
import { createSecureContext, DEFAULT_CIPHERS, rootCertificates, type SecureContext } from 'node:tls';
import { Agent, type Dispatcher } from 'undici';
import type { AttemptOutcome } from '../domain/delivery-state.js';
import { isSuccessStatus } from '../domain/delivery-state.js';
import { ATTEMPT_TIMEOUT_MS } from '../domain/schedule.js';
import type { AbandonSignal } from './abandon.js';
import { type AddressPolicy, checkUrl, createGuardedLookup, type LookupFunction } from './address-guard.js';
import { createBoundedLookup } from './bounded-lookup.js';
import { attemptFailure } from './failure-kind.js';
import { CONNECTIONS_PER_ORIGIN, createOriginRequests } from './origin-requests.js';
import { createResolverLookup, systemFallback } from './resolver-lookup.js';

export const RESPONSE_SNIPPET_BYTES = 4096;
/**
 * How much of an answer's body is read at most: the rest of a longer one is dropped with its
 * connection instead of drained. Up to this, the body is read to its end (past the snippet, only to
 * be discarded), so the connection is kept for the next attempt, if it comes within ANSWER_READ_MS.
 */
export const RESPONSE_READ_BYTES = 64 * 1024;
/**
 * How much of an answer's headers is read: past it the answer is `response_too_large`, a failure
 * even with a 2xx, as its status is known only once its headers are read. Node's 16 KiB turned
 * answers of receivers behind proxies that add large cookies or policies into failures.
 */
export const RESPONSE_HEADER_BYTES = 64 * 1024;
/**
 * Once an answer's status is in, the rest of it is read for at most this long: then the attempt is
 * answered with what came (the status decides it) and the connection dropped. Read until the
 * deadline, a receiver that sent `200` and then a byte now and then held its request 30 s an
 * attempt, delivered each time, so no breaker backed it off (design D27).
 */
export const ANSWER_READ_MS = 1_000;
/** Connecting (TCP and TLS) gets at most this long, well inside the attempt's 30 s. */
export const CONNECT_TIMEOUT_MS = 10_000;

export interface DeliveryClientOptions extends Partial<AddressPolicy> {
  /** Whole-attempt deadline. Default 30 s (design R11). */
  timeoutMs?: number;
  /** CA certificates to trust besides Node's roots (a test CA, a private CA). */
  ca?: string | Buffer | Array<string | Buffer>;
  /** Name resolution, for tests of rebinding; defaults to the DNS, asked directly (resolver-lookup.ts). */
  resolve?: LookupFunction;
  /** Keep-alive sockets per origin. Default 16. */
  connectionsPerOrigin?: number;
  /** Connecting (TCP and TLS) time-out. Default 10 s, never longer than the attempt. */
  connectTimeoutMs?: number;
}

export interface SendRequest {
  url: string;
  /** Shared with the other deliveries of its event (ClaimedDelivery.body): read it, never write or transfer it. */
  body: Uint8Array;
  headers: Record<string, string>;
  /** Cuts the request short (the worker lost its lease); it then ends as a `timeout`. */
  signal?: AbandonSignal;
  /** The account it is for: another account's requests never keep it waiting for a connection (origin-requests.ts). */
  account?: string | undefined;
}

export interface SendResult {
  outcome: AttemptOutcome;
  durationMs: number;
  responseSnippet: string | null;
  /** The `Retry-After` header of a non-2xx answer, as sent (design D40). */
  retryAfter?: string | null;
  /**
   * Its deadline passed while it waited behind earlier requests for one of its origin's
   * connections: no byte of it was written, so it says nothing of its receiver (design D24).
   */
  unsent?: true;
}

export interface DeliveryClient {
  send(request: SendRequest): Promise<SendResult>;
  /** Waits for requests in flight, then closes the pools. */
  close(): Promise<void>;
  /** Aborts requests in flight and closes the pools at once. */
  destroy(): Promise<void>;
}

/** What an attempt cut short because its worker lost the lease ends with (design I3). */
export const ABANDONED = 'abandoned: the lease was lost';

/** An attempt that ended with no answer: its deadline passed, or it was abandoned. */
export const timedOut = (message: string): Omit<SendResult, 'durationMs'> => ({
  outcome: { ok: false, kind: 'timeout', message },
  responseSnippet: null,
});

/** What an attempt whose deadline passed records (design D24). */
export const noAnswerWithin = (timeoutMs: number) => `no answer within ${timeoutMs} ms`;

/**
 * The longest a request is out: one that waited for a connection has its deadline again from its
 * writing (SendResult's `unsent`).
 */
export const longestRequestMs = (timeoutMs: number) => 2 * timeoutMs;

/** What a request that never had a connection ends with (SendResult's `unsent`). */
export const noConnectionWithin = (timeoutMs: number) =>
  `not sent: no connection to its server was free within ${timeoutMs} ms`;

/** A request given back unsent at its deadline `timeoutMs` (SendResult's `unsent`). */
export const givenBack = (timeoutMs: number): Omit<SendResult, 'durationMs'> => ({
  ...timedOut(noConnectionWithin(timeoutMs)),
  unsent: true,
});

/** A response snippet as log text: NUL cannot be stored in a PostgreSQL text column, so it is shown as U+FFFD. */
const snippetText = (chunks: Buffer[]) =>
  Buffer.concat(chunks).toString('utf8').replaceAll('\u0000', '\uFFFD');

/**
 * Node's TLS 1.2 suites without finite-field Diffie-Hellman (DHE): a receiver that picks DHE
 * chooses the group, and a prime of 8,000 to 10,000 bits (which OpenSSL accepts) costs the client
 * tens to hundreds of milliseconds of CPU a handshake, on the thread that sends every customer's
 * deliveries. The ECDHE suites that every current server offers remain, and TLS 1.3's are untouched.
 */
export const DELIVERY_CIPHERS = `${DEFAULT_CIPHERS}:!kDHE`;

/**
 * One TLS context for every connection: Node's defaults (its roots and NODE_EXTRA_CA_CERTS), or
 * with `ca`, Node's roots and `ca`. Without one, every connection builds its own; handing `ca` to
 * each connection would also drop the roots (Node's `ca` replaces them). A context costs about a millisecond of the event loop, and
 * a worker opens a connection per in-flight slot at start-up and after receivers close idle ones.
 */
function trustedContext(ca: DeliveryClientOptions['ca']): SecureContext {
  if (!ca) return createSecureContext({ ciphers: DELIVERY_CIPHERS });
  return createSecureContext({
    ciphers: DELIVERY_CIPHERS,
    ca: [...rootCertificates, ...(Array.isArray(ca) ? ca : [ca])],
  });
}

export function createDeliveryClient(options: DeliveryClientOptions = {}): DeliveryClient {
  const policy: AddressPolicy = { allowPrivateNetworks: options.allowPrivateNetworks ?? false };
  const timeoutMs = options.timeoutMs ?? ATTEMPT_TIMEOUT_MS;
  const secureContext = trustedContext(options.ca);
  // The DNS asked directly by default, so no tenant's names hold up another's (resolver-lookup.ts).
  const lookup = options.resolve
    ? createBoundedLookup(options.resolve)
    : createResolverLookup(policy.allowPrivateNetworks ? { fallback: systemFallback() } : {});
  const connections = options.connectionsPerOrigin ?? CONNECTIONS_PER_ORIGIN;
  const pool = {
    connect: {
      lookup: createGuardedLookup(policy, lookup),
      secureContext,
      timeout: Math.min(options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS, timeoutMs),
    },
    connections,
    keepAliveTimeout: 30_000,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    maxHeaderSize: RESPONSE_HEADER_BYTES,
  };
  // The second only once an account is kept waiting by another's (origin-requests.ts): a client
  // whose requests name no account (the operator's notices) never makes it.
  const agents: [Agent, Agent | undefined] = [new Agent(pool), undefined];
  const agentFor = (route: 0 | 1): Agent => {
    if (route === 0) return agents[0];
    agents[1] ??= new Agent(pool);
    return agents[1];
  };
  const requests = createOriginRequests(connections);

  return {
    async send(request) {
      // From the request's dispatch, or, for one that waited for a connection, from its writing.
      let started = performance.now();
      const elapsed = () => Math.round(performance.now() - started);
      const target = checkUrl(request.url, policy);
      if (!target.ok) {
        return {
          outcome: { ok: false, kind: 'blocked_address', message: target.reason },
          durationMs: elapsed(),
          responseSnippet: null,
        };
      }
      const { url } = target;
      // Abandoned before it was handed over: never sent (design I3).
      if (request.signal?.aborted) return { ...timedOut(ABANDONED), durationMs: elapsed() };
      const route = requests.open(url.origin, request.account);
      // Its place among the origin's open requests, given up once: when it is over, or when it is
      // cut before its writing (it will hold no connection, and its account's next requests are
      // routed without it).
      let counted = true;
      const release = () => {
        if (counted) requests.close(url.origin, request.account, route);
        counted = false;
      };
      return new Promise<SendResult>((resolve) => {
        let settled = false;
        let controller: Dispatcher.DispatchController | null = null;
        let cutShort: Error | null = null;
        let statusCode = 0;
        let retryAfter: string | undefined;
        const chunks: Buffer[] = [];
        let read = 0;
        let ended = false;
        let reading: ReturnType<typeof setTimeout> | undefined;
        // `result`: built by each caller for this call alone, since its duration is added to it
        // rather than spread into a new object (design D69).
        const settle = (result: Omit<SendResult, 'durationMs'>) => {
          if (settled) return;
          settled = true;
          resolve(Object.assign(result, { durationMs: elapsed() }));
        };
        // Drops the request, now or as soon as undici hands it a connection: a request that
        // outlives its attempt is never written afterwards.
        const cut = (reason: Error) => {
          cutShort ??= reason;
          if (controller) controller.abort(reason);
          else release();
        };
        // The deadline answers for the attempt whatever undici is doing: a request waiting for a
        // socket, or a connection stuck in its handshake, notices a cut only when it gets one
        // (measured: 1.5 to 6 times the deadline with 50 requests to one stalled origin).
        // Once the status line is in, the status decides the attempt (a 2xx is delivered, the body
        // is not used): a body that stalls or breaks off after it only shortens the snippet. Before
        // it, the deadline is a time-out. A lost lease is always an abandonment.
        const end = (message: string) => {
          if (statusCode !== 0 && message !== ABANDONED) answered();
          else settle(timedOut(message));
          cut(new Error(message));
        };
        const abandoned = () => end(ABANDONED);
        // One that waits behind the origin's earlier requests gets the deadline twice: to be handed
        // a connection (past it, it is given back unsent, nothing of it written), then, from its
        // writing, for its receiver (onRequestStart), whose time it is.
        const timer = setTimeout(() => {
          if (controller !== null || !route.queued) return end(noAnswerWithin(timeoutMs));
          settle(givenBack(timeoutMs)); // never written: no status to answer with
          cut(new Error(noConnectionWithin(timeoutMs)));
        }, timeoutMs);
        request.signal?.addEventListener('abort', abandoned, { once: true });
        // The request is over (its answer read, or failed): the deadline and the lease's signal let
        // go of it. Not before, though the attempt may be answered at its first 4 KiB: what is left
        // of the answer is read within ANSWER_READ_MS of its status, and within the deadline, so no
        // request outlives its attempt's.
        const over = () => {
          release();
          clearTimeout(timer);
          clearTimeout(reading);
          request.signal?.removeEventListener('abort', abandoned);
        };
        const answered = () => {
          const ok = isSuccessStatus(statusCode);
          const outcome: AttemptOutcome = ok
            ? { ok: true, statusCode }
            : { ok: false, kind: 'http_status', statusCode, message: `receiver answered ${statusCode}` };
          settle({
            outcome,
            responseSnippet: snippetText(chunks),
            ...(!ok && retryAfter !== undefined ? { retryAfter } : {}),
          });
        };
        // undici's dispatch, not request(): no AbortController, response stream or async iterator
        // per attempt, which cost a fifth of the service's CPU per delivery (design D24).
        // Options undici refuses (a header it cannot write) come to onResponseError too.
        agentFor(route.pool).dispatch(
          {
            origin: url.origin,
            path: url.pathname + url.search,
            method: 'POST',
            headers: request.headers,
            body: request.body,
          },
          {
            onRequestStart(c) {
              // Cut before its writing: thrown, undici drops it and keeps the connection for the
              // next request, where an abort would close it (and a waiting request cut at its
              // deadline would cost the receiver a connection, and a handshake, when its turn came).
              if (cutShort) throw cutShort;
              controller = c;
              if (route.queued) {
                started = performance.now();
                timer.refresh();
              }
            },
            onResponseStart(_c, code, headers) {
              if (code < 200) return; // informational: the answer is still to come
              statusCode = code;
              const value = headers['retry-after'];
              retryAfter = typeof value === 'string' ? value : undefined;
              reading = setTimeout(
                () => end(`the answer's body took over ${ANSWER_READ_MS} ms`),
                ANSWER_READ_MS,
              );
            },
            onResponseData(c, chunk) {
              const before = read;
              read += chunk.byteLength;
              if (before < RESPONSE_SNIPPET_BYTES) {
                chunks.push(chunk.subarray(0, RESPONSE_SNIPPET_BYTES - before));
                // The snippet is all the attempt keeps: it is answered now.
                if (read >= RESPONSE_SNIPPET_BYTES) answered();
              }
              if (before <= RESPONSE_READ_BYTES && read > RESPONSE_READ_BYTES) {
                // Cut once undici has parsed what it holds (cut inside its parse, an answer that
                // ended in the same read trips its own checks); one that ended keeps its connection.
                queueMicrotask(() => {
                  if (!ended) c.abort(new Error('the response is longer than the client reads'));
                });
              }
            },
            onResponseEnd() {
              ended = true;
              over();
              answered();
            },
            onResponseError(_c, error) {
              over();
              // After the deadline or a lost lease this changes nothing: those answered already.
              // With the status in, the body broke off: the status stands (above).
              if (statusCode !== 0) return answered();
              settle({
                outcome: { ok: false, ...attemptFailure(error, url.hostname) },
                responseSnippet: null,
              });
            },
          },
        );
      });
    },
    close: async () => {
      await Promise.all(agents.map((a) => a?.close()));
    },
    destroy: async () => {
      await Promise.all(agents.map((a) => a?.destroy()));
    },
  };
}
