/** `serve` or `worker --port` could not listen (a port in use, an address it cannot bind or resolve): exit code 1. */
export class ListenError extends Error {
  override readonly name = 'ListenError';
}
