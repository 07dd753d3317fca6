import { describe, expect, it } from 'vitest';
import { isSenderError } from '../errors.js';
import { frameAncestorsOf, publicUrlOf } from './origin-settings.js';

const refusal = (run: () => unknown): string => {
  try {
    run();
  } catch (error) {
    if (isSenderError(error) && error.code === 'invalid_option') return error.message;
    throw error;
  }
  throw new Error('accepted');
};

describe('frame ancestors (design D55)', () => {
  it('take https origins, separated by spaces or commas, once each', () => {
    expect(frameAncestorsOf(undefined)).toEqual([]);
    expect(frameAncestorsOf('')).toEqual([]);
    expect(
      frameAncestorsOf('https://app.example.com,https://admin.example.com:8443  https://app.example.com'),
    ).toEqual(['https://app.example.com', 'https://admin.example.com:8443']);
    expect(frameAncestorsOf(['https://app.example.com/'])).toEqual(['https://app.example.com']);
  });

  it('take http only on a loopback host, for development', () => {
    expect(frameAncestorsOf('http://localhost:3000 http://127.0.0.1:3000 http://[::1]:3000')).toHaveLength(3);
    expect(refusal(() => frameAncestorsOf('http://app.example.com'))).toMatch(/must use https/);
  });

  it('refuse paths, wildcards, keywords, credentials and anything a header could be bent with', () => {
    for (const bad of [
      'https://app.example.com/embed',
      'https://app.example.com?x=1',
      'https://*.example.com',
      "'self'",
      '*',
      'app.example.com',
      'https://user:pw@app.example.com',
      'https://app.example.com;script-src',
      'data:text/html,x',
      'javascript:alert(1)',
    ]) {
      expect(
        refusal(() => frameAncestorsOf(bad)),
        bad,
      ).toMatch(/a frame ancestor/);
    }
  });

  it('ask for the form the browser compares, rather than guess', () => {
    expect(refusal(() => frameAncestorsOf('https://App.Example.com'))).toMatch(
      /write "https:\/\/App.Example.com" as https:\/\/app.example.com/,
    );
    expect(refusal(() => frameAncestorsOf('https://app.example.com:443'))).toMatch(
      /as https:\/\/app.example.com$/,
    );
  });
});

describe('the public URL (design D54)', () => {
  it('is an https origin, or http on a loopback host', () => {
    expect(publicUrlOf('https://hooks.example.com/')).toBe('https://hooks.example.com');
    expect(publicUrlOf('http://127.0.0.1:8080')).toBe('http://127.0.0.1:8080');
    expect(refusal(() => publicUrlOf('https://example.com/hooks'))).toMatch(
      /the public URL must be an origin/,
    );
    expect(refusal(() => publicUrlOf('http://hooks.example.com'))).toMatch(/must use https/);
  });
});
