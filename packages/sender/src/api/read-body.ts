/** The direct path's body read (design D56): the whole body, or an error once the client has gone. */
import type { IncomingMessage } from 'node:http';
import { finished } from 'node:stream';
import { SenderError } from '../errors.js';

/** The body, or the answer a client that went away mid-body gets from the router too (400). */
export function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    // Node's own end of a stream: its end, an error, or a close before the whole body came. Its
    // listeners go once it has answered: Node leaves them on the request otherwise.
    const done = finished(req, (error) => {
      done();
      if (!error) resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
      else
        reject(
          new SenderError('invalid_request', 'the request body could not be read: request aborted', {
            cause: error,
          }),
        );
    });
  });
}
