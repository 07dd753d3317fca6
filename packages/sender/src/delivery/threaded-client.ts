/**
 * The delivery client on a worker thread of its own (design D59): each attempt's TLS, HTTP parsing
 * and socket writes leave the event loop, which the store, the ingest and the API share. The
 * thread runs http-client.ts unchanged (its deadline, address checks and read caps); this side
 * only hands requests over and answers come back, both in batches: one message per task here
 * (flushed in a microtask), one per turn of the thread's loop.
 *
 * The 30 s deadline holds whatever the thread does: a request it has not answered one to one and a
 * half seconds after the longest it may be out (its deadline, twice for one that waited for a
 * connection) is answered here, as a timeout, and its late answer is dropped.
 * Should the thread stop, its requests fail with an error rather than an outcome: nothing is
 * recorded against their receivers (whether they got the request is unknown), their leases lapse
 * and they are retried, and the next request starts a new thread.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { ATTEMPT_TIMEOUT_MS } from '../domain/schedule.js';
import { SenderError } from '../errors.js';
import { ownBytes } from '../own-bytes.js';
import type { AbandonSignal } from './abandon.js';
import {
  ABANDONED,
  type DeliveryClient,
  type DeliveryClientOptions,
  longestRequestMs,
  noAnswerWithin,
  type SendRequest,
  type SendResult,
  timedOut,
} from './http-client.js';

/** The thread's options: a name lookup cannot cross to another thread, so there is none. */
export type ThreadClientOptions = Omit<DeliveryClientOptions, 'resolve' | 'ca'> & { ca?: string[] };

/** Requests as the thread receives them: `id` matches the answer to its request. */
export type ToThread =
  | {
      type: 'send';
      requests: {
        id: number;
        url: string;
        body: Uint8Array;
        headers: Record<string, string>;
        account?: string | undefined;
      }[];
    }
  | { type: 'abort'; ids: number[] }
  | { type: 'close' }
  | { type: 'destroy' };
/** Answers: the request's result, or the message of the error its send threw. */
export type FromThread = ({ id: number; result: SendResult } | { id: number; error: string })[];

/**
 * How late past the longest it may be out (longestRequestMs) a request is answered here, should the
 * thread not have answered it (checked every half of it, so between one and one and a half of it late).
 */
const THREAD_GRACE_MS = 1_000;

interface Pending {
  resolve(result: SendResult): void;
  reject(error: Error): void;
  /** performance.now() when it was handed over. */
  sentAt: number;
  signal?: AbandonSignal;
  onAbort?: () => void;
}

export interface ThreadedClientOptions extends Omit<DeliveryClientOptions, 'resolve'> {
  /** Told when the thread stopped on an error (its requests failed with an error). */
  onThreadError?: (error: Error) => void;
  /** The thread's program; the built one beside this module by default (tests name it). */
  program?: URL;
  /** How late past the longest it may be out a request unanswered by the thread is answered here (tests shorten it). */
  graceMs?: number;
}

/**
 * The built program beside this module: by `__dirname` in the CommonJS build, whose stand-in for
 * `import.meta.url` mangles a folder name holding `#` or `%`; by the module's URL in the ESM one.
 */
const builtProgram = (): URL =>
  typeof __dirname === 'string'
    ? pathToFileURL(join(__dirname, 'delivery-thread.js'))
    : new URL('./delivery-thread.js', import.meta.url);

const caText = (ca: NonNullable<DeliveryClientOptions['ca']>): string[] =>
  (Array.isArray(ca) ? ca : [ca]).map((c) => c.toString());

export function createThreadedDeliveryClient(options: ThreadedClientOptions = {}): DeliveryClient {
  const { onThreadError, program = builtProgram(), graceMs = THREAD_GRACE_MS, ca, ...rest } = options;
  if (!existsSync(fileURLToPath(program))) {
    throw new SenderError(
      'invalid_option',
      `deliveryThread needs the thread's program at ${fileURLToPath(program)}, beside the package's entry points (a bundle that leaves it out cannot use the option)`,
    );
  }
  // The deadline resolved once, for the thread and for this side's backstop alike.
  const timeoutMs = options.timeoutMs ?? ATTEMPT_TIMEOUT_MS;
  const threadOptions: ThreadClientOptions = { ...rest, timeoutMs, ...(ca ? { ca: caText(ca) } : {}) };
  const pending = new Map<number, Pending>();
  let nextId = 0;
  let thread: Worker | null = null;
  let sweeper: NodeJS.Timeout | undefined;
  let closed = false;
  let sends: Extract<ToThread, { type: 'send' }>['requests'] = [];
  let aborts: number[] = [];
  let flushQueued = false;

  const answer = (id: number, result: SendResult | Error) => {
    const p = pending.get(id);
    if (!p) return; // answered here already (late, or its thread stopped)
    pending.delete(id);
    if (p.onAbort) p.signal?.removeEventListener('abort', p.onAbort);
    if (pending.size === 0) idle();
    if (result instanceof Error) p.reject(result);
    else p.resolve(result);
  };

  const flush = () => {
    flushQueued = false;
    const [requests, ids] = [sends, aborts];
    sends = [];
    aborts = [];
    // With no thread, what is queued belonged to one that stopped, and was answered when it did.
    if (!thread) return;
    try {
      if (requests.length > 0) thread.postMessage({ type: 'send', requests } satisfies ToThread);
      if (ids.length > 0) thread.postMessage({ type: 'abort', ids } satisfies ToThread);
    } catch (error) {
      // A request that cannot be handed over (cloned) fails alone, as a throwing send would.
      for (const r of requests) answer(r.id, error instanceof Error ? error : new Error(String(error)));
    }
  };
  const queueFlush = () => {
    if (flushQueued) return;
    flushQueued = true;
    queueMicrotask(flush);
  };

  // Requests the thread left unanswered past the longest they may be out: answered here (ids grow
  // with time, so the walk stops at the first one still within it).
  const sweep = () => {
    const late = performance.now() - longestRequestMs(timeoutMs) - graceMs;
    for (const [id, p] of pending) {
      if (p.sentAt > late) break;
      aborts.push(id);
      answer(id, {
        ...timedOut(noAnswerWithin(timeoutMs)),
        durationMs: Math.round(performance.now() - p.sentAt),
      });
    }
    if (aborts.length > 0) queueFlush();
  };

  const start = (): Worker => {
    const worker = new Worker(program, { workerData: threadOptions });
    let failure: Error | undefined;
    worker.on('message', (batch: FromThread) => {
      for (const a of batch) answer(a.id, 'result' in a ? a.result : new Error(a.error));
    });
    worker.on('error', (error) => {
      failure = error;
    });
    worker.on('exit', (code) => {
      if (thread === worker) thread = null;
      const reason = failure?.message ?? `exit code ${code}`;
      if (failure || !closed) onThreadError?.(failure ?? new Error(`the delivery thread exited (${reason})`));
      // Not an outcome: nothing is known of the receiver, so nothing is recorded against it.
      for (const id of pending.keys())
        answer(id, new Error(`the delivery thread stopped (${reason}) before an answer`));
    });
    return worker;
  };

  // While requests are out: the thread keeps the process alive and the deadline is watched here.
  // Closing, the thread is waited for (its exit), so it keeps the process alive till then.
  const busy = () => {
    thread?.ref();
    sweeper ??= setInterval(sweep, graceMs / 2);
    sweeper.unref();
  };
  const idle = () => {
    if (!closed) thread?.unref();
    clearInterval(sweeper);
    sweeper = undefined;
  };

  const stop = async (type: 'close' | 'destroy') => {
    closed = true;
    const worker = thread;
    if (!worker) return;
    flush();
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.ref(); // the requests it finishes are answered before the process may end
    worker.postMessage({ type } satisfies ToThread);
    await exited;
  };

  return {
    send(request: SendRequest): Promise<SendResult> {
      if (closed) {
        return Promise.resolve({
          outcome: { ok: false, kind: 'connect', message: 'the delivery client is closed' },
          durationMs: 0,
          responseSnippet: null,
        });
      }
      // Abandoned before it was handed over: never sent, as the client in this thread does.
      if (request.signal?.aborted) {
        return Promise.resolve({ ...timedOut(ABANDONED), durationMs: 0 });
      }
      thread ??= start();
      const id = nextId++;
      const bytes = ownBytes(request.body);
      return new Promise<SendResult>((resolve, reject) => {
        const p: Pending = { resolve, reject, sentAt: performance.now() };
        if (pending.size === 0) busy();
        pending.set(id, p);
        sends.push({ id, url: request.url, body: bytes, headers: request.headers, account: request.account });
        if (request.signal) {
          p.signal = request.signal;
          p.onAbort = () => {
            aborts.push(id);
            queueFlush();
          };
          request.signal.addEventListener('abort', p.onAbort, { once: true });
        }
        queueFlush();
      });
    },
    close: () => stop('close'),
    destroy: () => stop('destroy'),
  };
}
