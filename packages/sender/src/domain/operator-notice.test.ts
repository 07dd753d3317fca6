import { describe, expect, it } from 'vitest';
import { noticeOf } from './operator-notice.js';

const bodyOf = (url: string) => {
  const notice = noticeOf({
    type: 'endpoint.failing',
    endpoint: { id: 'ep_1', accountId: 'acct_1', url, consecutiveFailures: 5 },
    rules: { failingAt: 5, threshold: 10 },
    now: Date.UTC(2026, 11, 7),
  });
  return JSON.parse(new TextDecoder().decode(notice.body));
};

describe('noticeOf', () => {
  it('names the endpoint by its origin, never its path or query', () => {
    expect(bodyOf('https://hooks.example.com:8443/in/tok_secret?key=1').endpoint_origin).toBe(
      'https://hooks.example.com:8443',
    );
  });

  it('names one whose stored URL no longer parses by its scheme and host, rather than throw', () => {
    expect(bodyOf('https://exa mple.com/in/tok_secret').endpoint_origin).toBe('https://exa mple.com');
    expect(bodyOf('https://exa mple.com').endpoint_origin).toBe('https://exa mple.com');
    // Never its query, fragment or credentials.
    expect(bodyOf('https://exa mple.com?key=tok_secret').endpoint_origin).toBe('https://exa mple.com');
    expect(bodyOf('https://exa mple.com#tok_secret').endpoint_origin).toBe('https://exa mple.com');
    expect(bodyOf('https://user:pw_secret@exa mple.com/x').endpoint_origin).toBe('https://exa mple.com');
    expect(bodyOf('https://user:p@ss_secret@exa mple.com/x').endpoint_origin).toBe('https://exa mple.com');
    expect(bodyOf('https://exa mple.com\\in\\tok_secret').endpoint_origin).toBe('https://exa mple.com');
    expect(bodyOf('https://exa mple.com\\@x/y').endpoint_origin).toBe('https://exa mple.com');
    expect(bodyOf('https://exa mple.com;tok_secret=1/x').endpoint_origin).toBe('https://exa mple.com');
    expect(bodyOf('not a url at all').endpoint_origin).toBe('');
  });
});
