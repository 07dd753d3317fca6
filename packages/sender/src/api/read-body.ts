/** The direct path's body read (design D56): the whole body, or an error once the client has gone. */
import type { IncomingMessage } from 'node:http';
import { SenderError } from '../errors.js';

/** The body, or the answer a client that went away mid-body gets from the router too (400). */
export function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.once('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    const aborted = (error?: Error) =>
      reject(
        new SenderError('invalid_request', 'the request body could not be read: request aborted', {
          cause: error,
        }),
      );
    req.once('error', aborted);
    // Closed before the whole body came, whether or not the stream reported an error for it.
    req.once('close', () => {
      if (!req.complete) aborted();
    });
  });
}
