import { unreadableBody, WebhookError } from '../errors.js';

/**
 * Reads a Web `Request` body as bytes, stopping at `max` so a huge body is never buffered whole.
 * Shared by the fetch and Next.js App Router adapters.
 */
export async function readWebBody(request: Request, max: number): Promise<Uint8Array> {
  const tooLarge = () => new WebhookError('payload_too_large', `The body is larger than ${max} bytes.`);
  const declared = Number(request.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > max) throw tooLarge();
  if (request.bodyUsed) {
    throw new WebhookError('body_already_parsed', 'The request body was read before the webhook handler.', {
      hint: 'Pass the untouched Request (or request.clone()) to the handler; do not call request.json() first.',
    });
  }
  if (!request.body) return new Uint8Array(0);
  // The stream failing (a client gone, a body locked by other code) is the body's fault, not the
  // handler's: answered invalid_body.
  let reader: ReadableStreamDefaultReader<Uint8Array>;
  try {
    reader = request.body.getReader();
  } catch (error) {
    throw unreadableBody(error);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read().catch((error: unknown) => {
      throw unreadableBody(error);
    });
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge();
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}
