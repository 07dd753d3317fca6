/**
 * The delivery thread's program (threaded-client.ts): http-client.ts on a worker thread, sending
 * what the event loop hands it and handing the answers back, those of one turn in one message.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { type Abandon, createAbandon } from './abandon.js';
import { createDeliveryClient } from './http-client.js';
import type { FromThread, ThreadClientOptions, ToThread } from './threaded-client.js';

const port = parentPort;
if (!port) throw new Error('the delivery thread runs as a worker thread');

const client = createDeliveryClient(workerData as ThreadClientOptions);
// Each request's own abandonment: the event loop aborts it when the worker lost its lease or gave
// it back at stop, or when it answered the request itself past the longest it may be out.
const abandons = new Map<number, Abandon>();
let answers: FromThread = [];
let flushQueued = false;

const flush = () => {
  flushQueued = false;
  if (answers.length === 0) return;
  port.postMessage(answers);
  answers = [];
};

const end = (stopping: Promise<void>) =>
  // After the answers the requests' ends queued: a turn later, they are in `answers`.
  void stopping.finally(() =>
    setImmediate(() => {
      flush();
      port.close();
    }),
  );

port.on('message', (message: ToThread) => {
  switch (message.type) {
    case 'send':
      for (const { id, url, body, headers, account } of message.requests) {
        const abandon = createAbandon();
        abandons.set(id, abandon);
        const answered = (answer: FromThread[number]) => {
          abandons.delete(id);
          answers.push(answer);
          if (!flushQueued) {
            flushQueued = true;
            setImmediate(flush);
          }
        };
        // A send that throws (undici refusing its options) fails there as it would here.
        client.send({ url, body, headers, signal: abandon.signal, account }).then(
          (result) => answered({ id, result }),
          (error: unknown) => answered({ id, error: error instanceof Error ? error.message : String(error) }),
        );
      }
      break;
    case 'abort':
      for (const id of message.ids) abandons.get(id)?.abort();
      break;
    case 'close':
      end(client.close());
      break;
    case 'destroy':
      end(client.destroy());
      break;
  }
});
