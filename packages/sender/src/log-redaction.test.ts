import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { redaction } from './log-redaction.js';

/** The lines a logger with the service's redaction writes for `log`. */
function logged(log: (logger: pino.Logger) => void): string {
  const lines: string[] = [];
  log(pino({ redact: redaction }, { write: (line: string) => lines.push(line) }));
  return lines.join('');
}

describe('log redaction', () => {
  it('removes secrets, keys and headers at the top of a line and two levels in', () => {
    const text = logged((logger) => {
      logger.info({ secret: 's-top', apiKey: 'k-top', api_key: 'k-snake', authorization: 'a-top' }, 'top');
      logger.info({ endpoint: { secret: 's-one', url: 'https://hooks.example.com/in' } }, 'one');
      logger.info(
        { notice: { endpoint: { secret: 's-two' } }, body: { account: { api_key: 'k-two' } } },
        'two',
      );
      const err = Object.assign(new Error('refused'), {
        request: { headers: { authorization: 'Bearer h-two' } },
        headers: { authorization: 'Bearer h-one' },
      });
      logger.error({ err }, 'failed');
    });
    for (const leaked of ['s-top', 'k-top', 'k-snake', 'a-top', 's-one', 's-two', 'k-two', 'h-one', 'h-two'])
      expect(text).not.toContain(leaked);
    // What is not secret stays.
    expect(text).toContain('https://hooks.example.com/in');
    expect(text).toContain('refused');
  });
});
