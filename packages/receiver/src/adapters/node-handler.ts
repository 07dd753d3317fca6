/**
 * Reads the raw body of a Node `IncomingMessage`, shared by the Express, Node and Next.js Pages
 * adapters. It never re-serialises a parsed body (design R10) and never waits on a stream that
 * something else already drained: in that case it fails at once and says how to fix the app.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { unreadableBody, WebhookError } from '../errors.js';
import { createDeliveryHandler, DEFAULT_MAX_BODY_BYTES } from '../handler/handle-delivery.js';
import type { WebhookOptions, WebhookResponse } from '../handler/options.js';

type MaybeParsed = IncomingMessage & { body?: unknown; rawBody?: unknown };

export interface NodeBodyOptions {
  maxBodyBytes: number;
  /** How to fix an app whose body parser ran first; framework-specific. */
  alreadyParsedHint: string;
}

/** Whether the request stream has already been read to its end by someone else. */
function consumed(req: IncomingMessage): boolean {
  // The same test body-parser uses (on-finished): complete and no longer readable.
  return req.readableEnded || (req.complete && !req.readable);
}

const isObject = (body: unknown): body is object =>
  body !== undefined && body !== null && typeof body === 'object';

/**
 * The `{}` Express 4's express.json() leaves on every request it does not read (an empty body,
 * another content type): the stream is still unread, so the bytes are there to read.
 */
function unreadDefault(body: object): boolean {
  return Object.getPrototypeOf(body) === Object.prototype && Object.keys(body).length === 0;
}

function tooLarge(max: number): WebhookError {
  return new WebhookError('payload_too_large', `The body is larger than ${max} bytes.`, {
    hint: 'Raise maxBodyBytes if your deliveries are legitimately this large.',
  });
}

function readNodeBody(req: IncomingMessage, options: NodeBodyOptions): Promise<Uint8Array | string> {
  const r = req as MaybeParsed;
  // Raw bytes captured by a parser's verify hook (captureRawBody, NestJS rawBody, Firebase), or
  // left by express.raw() / a buffer parser in req.body: held to maxBodyBytes all the same, as the
  // parser's own limit may be larger.
  const captured =
    r.rawBody instanceof Uint8Array || typeof r.rawBody === 'string'
      ? r.rawBody
      : r.body instanceof Uint8Array
        ? r.body
        : undefined;
  if (captured !== undefined) {
    const size = typeof captured === 'string' ? Buffer.byteLength(captured) : captured.byteLength;
    return size > options.maxBodyBytes
      ? Promise.reject(tooLarge(options.maxBodyBytes))
      : Promise.resolve(captured);
  }
  if (consumed(req) || (isObject(r.body) && !unreadDefault(r.body))) {
    return Promise.reject(
      new WebhookError(
        'body_already_parsed',
        'A body parser consumed the request before the webhook handler.',
        {
          hint: options.alreadyParsedHint,
        },
      ),
    );
  }
  // Chunks decoded to text by other code's setEncoding are not the bytes that were signed.
  if (req.readableEncoding !== null) {
    return Promise.reject(
      new WebhookError(
        'invalid_body',
        `Other code set the request stream's encoding (${req.readableEncoding}): the signature needs its bytes. Remove the setEncoding call.`,
      ),
    );
  }
  if (req.destroyed) return Promise.reject(unreadableBody(new Error('request closed before it was read')));
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > options.maxBodyBytes) {
    req.resume();
    return Promise.reject(tooLarge(options.maxBodyBytes));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onFail);
      req.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > options.maxBodyBytes) {
        cleanup();
        req.resume();
        reject(tooLarge(options.maxBodyBytes));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onFail = (error: unknown) => {
      cleanup();
      reject(unreadableBody(error));
    };
    // Closed before its end (the client went away): the body will never come. Node 20 also emits
    // 'error' then; 'close' covers a runtime that does not.
    const onClose = () => onFail(new Error('request closed before its end'));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onFail);
    req.on('close', onClose);
  });
}

/** Writes a shared-handler response to a Node `ServerResponse`. */
export function writeNodeResponse(res: ServerResponse, response: WebhookResponse): void {
  if (res.headersSent) return;
  res.writeHead(response.status, { ...response.headers, 'content-length': Buffer.byteLength(response.body) });
  res.end(response.body);
}

/**
 * The shared handler bound to Node's request/response pair: what the Node, Express and Next.js
 * Pages adapters are, apart from the hint they give when a body parser ran first.
 */
export function createNodeHandler(
  options: WebhookOptions,
  alreadyParsedHint: string,
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const handle = createDeliveryHandler(options);
  const bodyOptions = { maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES, alreadyParsedHint };
  return async (req, res) => {
    const response = await handle({
      method: req.method ?? 'GET',
      header: (name) => req.headers[name],
      readBody: () => readNodeBody(req, bodyOptions),
    });
    writeNodeResponse(res, response);
  };
}
