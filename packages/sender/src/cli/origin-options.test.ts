import { describe, expect, it } from 'vitest';
import { parseCommand, USAGE, UsageError } from './options.js';

const httpOf = (argv: string[], env: Record<string, string> = {}) => {
  const command = parseCommand(['serve', ...argv], { LINKHOOKS_DB: 'sqlite:test.db', ...env });
  if (command.kind !== 'serve') throw new Error(command.kind);
  return command.http;
};
const usageError = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    if (error instanceof UsageError) return error.message;
    throw error;
  }
  throw new Error('accepted');
};

describe('--public-url and --frame-ancestors (design D54, D55)', () => {
  it('are unset by default, and read from the flag or its variable, a flag first', () => {
    expect(httpOf([])).toEqual({ trustProxy: false, hsts: false, frameAncestors: [] });
    expect(httpOf(['--public-url', 'https://hooks.example.com']).publicUrl).toBe('https://hooks.example.com');
    expect(httpOf([], { LINKHOOKS_PUBLIC_URL: 'https://env.example.com' }).publicUrl).toBe(
      'https://env.example.com',
    );
    expect(
      httpOf(['--frame-ancestors', 'https://a.example.com https://b.example.com'], {
        LINKHOOKS_FRAME_ANCESTORS: 'https://env.example.com',
      }).frameAncestors,
    ).toEqual(['https://a.example.com', 'https://b.example.com']);
    expect(httpOf([], { LINKHOOKS_FRAME_ANCESTORS: 'https://env.example.com' }).frameAncestors).toEqual([
      'https://env.example.com',
    ]);
  });

  it('refuse a value that is not an origin, naming where it came from', () => {
    expect(usageError(() => httpOf(['--frame-ancestors', 'https://*.example.com']))).toMatch(
      /^--frame-ancestors: a frame ancestor must be an origin/,
    );
    expect(usageError(() => httpOf([], { LINKHOOKS_FRAME_ANCESTORS: 'http://app.example.com' }))).toMatch(
      /^LINKHOOKS_FRAME_ANCESTORS: a frame ancestor must use https/,
    );
    expect(usageError(() => httpOf(['--public-url', 'https://example.com/hooks']))).toMatch(
      /^--public-url: /,
    );
  });

  it('are in the usage', () => {
    for (const word of [
      '--public-url',
      '--frame-ancestors',
      'LINKHOOKS_PUBLIC_URL',
      'LINKHOOKS_FRAME_ANCESTORS',
    ])
      expect(USAGE).toContain(word);
  });
});
