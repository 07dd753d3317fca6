/** A pino logger for tests whose lines are kept, to be read as text or as parsed lines. */
import { Writable } from 'node:stream';
import pino from 'pino';

export function capturedLog(level = 'info') {
  let text = '';
  const logger = pino(
    { level },
    new Writable({
      write(chunk, _encoding, done) {
        text += chunk.toString();
        done();
      },
    }),
  );
  const lines = () =>
    text
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
  /** The lines whose message starts with `prefix`. */
  const linesStarting = (prefix: string) => lines().filter((l) => String(l.msg).startsWith(prefix));
  return { logger, text: () => text, lines, linesStarting };
}
