// @vitest-environment happy-dom
// @vitest-environment-options {"url": "http://dashboard.test/dashboard"}
/**
 * The dashboard's components and data fetching with the management API mocked by msw: what each
 * view asks of the API and how it shows the answers. The browser tests run against the real service.
 */

import { EVENT_NAMES } from '@linkhooks/protocol';
import { act, cleanup, fireEvent, render, screen, waitFor } from '@testing-library/preact';
import { HttpResponse, http } from 'msw';
import { setupServer } from 'msw/node';
import { render as preactRender } from 'preact';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ApiError, api, EVENTS } from '../dashboard/src/api.js';
import { App } from '../dashboard/src/app.js';
import { Deliveries } from '../dashboard/src/deliveries.js';
import { DeliveryDetailView } from '../dashboard/src/delivery-detail.js';
import { Endpoints } from '../dashboard/src/endpoints.js';
import { API_ERROR_MESSAGES } from '../dashboard/src/messages.js';
import { useView } from '../dashboard/src/navigation.js';
import { usePolling } from '../dashboard/src/use-polling.js';

const seen: Request[] = [];
const endpoint = {
  id: 'ep_1',
  url: 'https://hooks.example.com/linkhooks',
  events: ['click'],
  description: null,
  enabled: false,
  consecutive_failures: 10,
  disabled_reason: 'consecutive_failures',
  disabled_at: '2026-11-22T10:00:00.000Z',
  standard_webhooks: false,
  previous_secret_expires_at: null,
  paused: false,
  paused_at: null,
  status: 'disabled',
  created_at: '2026-11-22T09:00:00.000Z',
};
const enabled = {
  ...endpoint,
  enabled: true,
  consecutive_failures: 0,
  disabled_reason: null,
  status: 'active',
};
const delivery = (id: string, status = 'delivered') => ({
  id,
  event_id: 'evt_1',
  endpoint_id: 'ep_1',
  event: 'click',
  status,
  attempts: 1,
  next_attempt_at: null,
  last_failure_kind: null,
  last_status_code: 200,
  test: false,
  created_at: '2026-11-22T10:00:00.000Z',
  updated_at: '2026-11-22T10:00:01.000Z',
});
let signedIn = false;

const server = setupServer(
  http.all('*', ({ request }) => {
    seen.push(request.clone());
  }),
  http.get('*/v1/session', () =>
    signedIn
      ? HttpResponse.json({ account: { id: 'acct_1', name: 'Acme' } })
      : HttpResponse.json({ error: { code: 'unauthorized', message: 'sign in' } }, { status: 401 }),
  ),
  http.post('*/v1/session', async ({ request }) => {
    const { api_key } = (await request.json()) as { api_key: string };
    if (api_key !== 'lhk_good') {
      return HttpResponse.json(
        {
          error: {
            code: 'unauthorized',
            message: 'the API key is not valid: check it, or make a new key for the account',
          },
        },
        { status: 401 },
      );
    }
    signedIn = true;
    return HttpResponse.json({ account: { id: 'acct_1', name: 'Acme' } }, { status: 201 });
  }),
  http.get('*/v1/endpoints', () => HttpResponse.json({ data: [endpoint] })),
  http.get('*/v1/endpoints/:id', () => HttpResponse.json(endpoint)),
  http.get('*/reference/receiver', () => new HttpResponse(null, { status: 404 })),
  http.get('*/v1/deliveries', ({ request }) => {
    const url = new URL(request.url);
    const cursor = url.searchParams.get('cursor');
    return HttpResponse.json(
      cursor
        ? { data: [delivery('dlv_old')], next_cursor: null }
        : {
            data: [
              {
                ...delivery('dlv_new', url.searchParams.get('status') ?? 'delivered'),
                // A held delivery keeps the due time it had when its endpoint was disabled.
                ...(url.searchParams.get('status') === 'held' && {
                  next_attempt_at: '2026-11-22T10:01:00.000Z',
                }),
              },
            ],
            next_cursor: 'dlv_new',
          },
    );
  }),
  http.get('*/v1/deliveries/:id', ({ params }) =>
    HttpResponse.json({
      delivery: {
        ...delivery(String(params.id), 'awaiting_retry'),
        attempts: 2,
        next_attempt_at: '2026-11-22T10:06:00.000Z',
      },
      request_body: '{"event":"click"}',
      attempts: [1, 2].map((n) => ({
        number: n,
        started_at: new Date(Date.UTC(2026, 10, 22, 10, n === 1 ? 0 : 1)).toISOString(),
        duration_ms: 12,
        status_code: 500,
        failure_kind: 'http_status',
        error_message: 'receiver answered 500',
        response_snippet: '{"error":"down"}',
        next_attempt_at: n === 1 ? '2026-11-22T10:01:00.000Z' : '2026-11-22T10:06:00.000Z',
        request_headers: { 'x-service-signature': 'ab'.repeat(32) },
      })),
    }),
  ),
  http.post('*/v1/deliveries/:id/retry', () =>
    HttpResponse.json(delivery('dlv_x', 'pending'), { status: 202 }),
  ),
);

beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => {
  server.resetHandlers();
  cleanup();
  seen.length = 0;
  signedIn = false;
});
afterAll(() => server.close());

/** The log at its address, following the address as the app does. */
function Log() {
  const view = useView();
  return view.name === 'log' ? <Deliveries filters={view.filters} /> : null;
}
const openLog = (query = '') => {
  history.replaceState(null, '', `/dashboard/log${query}`);
  return render(<Log />);
};
const note = () => document.querySelector('p.note')?.textContent;
/** The log at its address, paged once to "Older" (its second page on screen). */
const openSecondPage = async () => {
  openLog();
  await waitFor(() => expect(document.querySelector('tr[data-delivery="dlv_new"]')).not.toBeNull());
  fireEvent.click(screen.getByRole('button', { name: 'Older' }));
  await waitFor(() => expect(document.querySelector('tr[data-delivery="dlv_old"]')).not.toBeNull());
};

describe('the list the dashboard writes out', () => {
  it('is the protocol’s events', () => {
    expect(EVENTS).toEqual([...EVENT_NAMES]);
  });
});

describe('data fetching', () => {
  it('sends the CSRF header on changes only, never an API key header, and same-origin credentials', async () => {
    await api.endpoints();
    await api.retry('dlv_x');
    const [get, post] = seen;
    expect(get!.headers.get('x-linkhooks-csrf')).toBeNull();
    expect(post!.headers.get('x-linkhooks-csrf')).toBe('1');
    expect(get!.headers.get('authorization')).toBeNull();
    expect(get!.credentials).toBe('same-origin');
  });

  it('builds the log query from the filters and turns error bodies into ApiError', async () => {
    await api.deliveries({ endpointId: 'ep_1', status: 'failed', event: 'click', cursor: 'dlv_9', limit: 5 });
    expect(new URL(seen[0]!.url).search).toBe(
      '?endpoint_id=ep_1&status=failed&event=click&cursor=dlv_9&limit=5',
    );
    const error = await api.signIn('lhk_bad').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    // The service's words are kept; the page shows plain ones.
    expect(error).toMatchObject({
      status: 401,
      code: 'unauthorized',
      detail: 'the API key is not valid: check it, or make a new key for the account',
      message: API_ERROR_MESSAGES.unauthorized,
    });
  });

  it('tells the wait a refusal names in Retry-After, not a wait of its own', async () => {
    const refused = (seconds: string) =>
      HttpResponse.json(
        { error: { code: 'rate_limited', message: 'too many log searches for this account at once' } },
        { status: 429, headers: { 'retry-after': seconds } },
      );
    server.use(http.get('*/v1/deliveries', () => refused('1')));
    const search = await api.deliveries({ q: 'clk_1' }).catch((e: unknown) => e);
    expect(search).toMatchObject({
      status: 429,
      code: 'rate_limited',
      retryAfterSeconds: 1,
      message: 'Too many requests in a short time. Try again in 1 second.',
    });
    server.use(http.get('*/v1/deliveries', () => refused('42')));
    const minute = await api.deliveries({}).catch((e: unknown) => e);
    expect((minute as Error).message).toBe('Too many requests in a short time. Try again in 42 seconds.');
  });
});

describe('polling', () => {
  it('drops an answer that went stale: after the deps changed, after the view went, after a later read', async () => {
    const reads: { dep: string; answer: (v: string) => void }[] = [];
    const shown: string[] = [];
    let reload: () => Promise<void> = async () => {};
    function Polled({ dep }: { dep: string }) {
      reload = usePolling(
        () => new Promise<string>((answer) => reads.push({ dep, answer })),
        (v) => shown.push(v),
        () => {},
        null,
        [dep],
      );
      return null;
    }
    // Each read answers when told to, with its index among the reads.
    const answer = async (i: number) => {
      reads[i]!.answer(`${reads[i]!.dep}${i}`);
      await Promise.resolve();
      await Promise.resolve();
    };
    const view = render(<Polled dep="a" />);
    view.rerender(<Polled dep="b" />);
    await answer(0); // a's read, after b came: dropped
    await answer(1);
    expect(shown).toEqual(['b1']);
    const slow = reload();
    const quick = reload();
    await answer(3);
    await answer(2); // sent before the answer shown: dropped
    await Promise.all([slow, quick]);
    expect(shown).toEqual(['b1', 'b3']);
    const last = reload();
    view.unmount();
    await answer(4); // the view went: dropped
    await last;
    expect(shown).toEqual(['b1', 'b3']);
  });

  it('drops an answer to the old deps that lands between the render that changed them and its effects', async () => {
    const reads: { dep: string; answer: (v: string) => void }[] = [];
    const shown: string[] = [];
    function Polled({ dep }: { dep: string }) {
      usePolling(
        () => new Promise<string>((answer) => reads.push({ dep, answer })),
        (v) => shown.push(`${dep} shows ${v}`),
        () => {},
        null,
        [dep],
      );
      return null;
    }
    const view = render(<Polled dep="a" />);
    // Rendered outside act: committed, with no passive effect run yet.
    preactRender(<Polled dep="b" />, view.container);
    reads[0]!.answer('a0');
    await Promise.resolve();
    await Promise.resolve();
    expect(shown).toEqual([]);
    await act(async () => {});
    reads[1]!.answer('b1');
    await waitFor(() => expect(shown).toEqual(['b shows b1']));
  });
});

describe('polling a slow read', () => {
  it('skips a tick while the last read is unanswered, and reads again at the next tick after it', async () => {
    const answers: (() => void)[] = [];
    function Polled() {
      usePolling(
        () => new Promise<void>((answer) => answers.push(answer)),
        () => {},
        () => {},
        2_000,
        [],
      );
      return null;
    }
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const view = render(<Polled />);
      expect(answers).toHaveLength(1);
      vi.advanceTimersByTime(6_000);
      expect(answers).toHaveLength(1);
      answers[0]!();
      await Promise.resolve();
      await Promise.resolve();
      vi.advanceTimersByTime(2_000);
      expect(answers).toHaveLength(2);
      // One that never ends holds the ticks back for 30 s, no longer.
      vi.advanceTimersByTime(28_000);
      expect(answers).toHaveLength(2);
      vi.advanceTimersByTime(2_000);
      expect(answers).toHaveLength(3);
      view.unmount();
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('components', () => {
  it('shows the sign-in again when a request says the session has ended (its key revoked)', async () => {
    let revoked = false;
    server.use(
      http.get('*/v1/session', () =>
        revoked
          ? HttpResponse.json(
              { error: { code: 'unauthorized', message: 'the session has ended' } },
              { status: 401 },
            )
          : HttpResponse.json({ account: { id: 'acct_1', name: 'Acme' } }),
      ),
      http.get('*/v1/endpoints', () =>
        revoked
          ? HttpResponse.json(
              { error: { code: 'unauthorized', message: 'the session has ended' } },
              { status: 401 },
            )
          : HttpResponse.json({ data: [endpoint] }),
      ),
    );
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      render(<App />);
      await screen.findByRole('heading', { name: 'Endpoints' });
      revoked = true;
      // The endpoints' next poll answers 401: the page gives way to the sign-in.
      vi.advanceTimersByTime(2_000);
      expect(await screen.findByLabelText('API key')).toBeTruthy();
      expect(screen.queryByRole('heading', { name: 'Endpoints' })).toBeNull();
    } finally {
      vi.useRealTimers();
    }
  });

  it('signs in with the key, then shows the endpoints with their disabled state', async () => {
    render(<App />);
    const input = await screen.findByLabelText('API key');
    fireEvent.input(input, { target: { value: 'lhk_bad' } });
    fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    expect((await screen.findByRole('alert')).textContent).toMatch(/not valid/);
    fireEvent.input(input, { target: { value: 'lhk_good' } });
    fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    await screen.findByRole('heading', { name: 'Endpoints' });
    expect(await screen.findByText(endpoint.url)).toBeTruthy();
    expect(document.querySelector('.status')?.textContent).toBe('Disabled');
    expect(screen.getByText(/10 deliveries in a row failed/)).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Re-enable' })).toBeTruthy();
    expect(screen.getByLabelText('Replay skipped events')).toBeTruthy();
    expect(document.body.innerHTML).not.toContain('lhk_good');
  });

  it('filters the log by status, keeps the filter in the address, and pages with the cursor', async () => {
    openLog();
    await screen.findByText('delivered');
    fireEvent.change(screen.getByLabelText('Status'), { target: { value: 'failed' } });
    await waitFor(() =>
      expect(seen.some((r) => new URL(r.url).searchParams.get('status') === 'failed')).toBe(true),
    );
    await screen.findByText('failed', { selector: '.badge' });
    expect(location.pathname + location.search).toBe('/dashboard/log?status=failed');
    fireEvent.click(screen.getByRole('button', { name: 'Older' }));
    await waitFor(() =>
      expect(seen.some((r) => new URL(r.url).searchParams.get('cursor') === 'dlv_new')).toBe(true),
    );
    await waitFor(() => expect(document.querySelector('tr[data-delivery="dlv_old"]')).not.toBeNull());
  });

  it('asks once for the first page of a new filter, without the previous filter’s cursor', async () => {
    // The live first page's timer faked and never run: every request counted is one a render made.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      await openSecondPage();
      fireEvent.change(screen.getByLabelText('Status'), { target: { value: 'failed' } });
      await screen.findByText('failed', { selector: '.badge' });
      const asked = seen
        .map((r) => new URL(r.url))
        .filter((u) => u.pathname.endsWith('/v1/deliveries') && u.searchParams.get('status') === 'failed');
      expect(asked.map((u) => u.searchParams.get('cursor'))).toEqual([null]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('starts at the first page again when the earlier filters come back', async () => {
    await openSecondPage();
    fireEvent.change(screen.getByLabelText('Status'), { target: { value: 'failed' } });
    await screen.findByText('failed', { selector: '.badge' });
    fireEvent.change(screen.getByLabelText('Status'), { target: { value: '' } });
    await waitFor(() =>
      expect(document.querySelector('tr[data-delivery="dlv_new"]')?.getAttribute('data-status')).toBe(
        'delivered',
      ),
    );
    expect(document.querySelector('.live')).not.toBeNull();
    expect(screen.getByRole('button', { name: 'Newer' }).hasAttribute('disabled')).toBe(true);
  });

  it('searches the log by click_id through the address, and names each row’s endpoint', async () => {
    openLog('?status=delivered');
    await screen.findByText('delivered', { selector: '.badge' });
    expect(document.querySelector('tr[data-delivery="dlv_new"] .endpoint-url')?.textContent).toBe(
      'hooks.example.com/linkhooks',
    );
    expect(document.querySelector('tr[data-delivery="dlv_new"] .when')?.textContent).toMatch(/^finished /);
    fireEvent.input(screen.getByLabelText('Search'), { target: { value: ' clk_42 ' } });
    fireEvent.click(screen.getByRole('button', { name: 'Search' }));
    await waitFor(() =>
      expect(seen.some((r) => new URL(r.url).searchParams.get('q') === 'clk_42')).toBe(true),
    );
    expect(location.search).toBe('?status=delivered&q=clk_42');
    expect(new URL(seen.at(-1)!.url).searchParams.get('status')).toBe('delivered');
  });

  it('shows a held delivery as waiting for its endpoint, not at a time already past', async () => {
    openLog();
    await screen.findByText('delivered');
    fireEvent.change(screen.getByLabelText('Status'), { target: { value: 'held' } });
    await screen.findByText('held', { selector: '.badge' });
    expect(document.querySelector('tr[data-delivery="dlv_new"] .when')?.textContent).toBe('when re-enabled');
  });

  it('shows a delivery’s attempts at their real times, explains failures, and retries it', async () => {
    server.use(http.get('*/v1/endpoints/:id', () => HttpResponse.json(enabled)));
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.UTC(2026, 10, 22, 10, 2));
    try {
      render(<DeliveryDetailView id="dlv_7" />);
      await screen.findByText('dlv_7');
      await waitFor(() =>
        expect(document.querySelector('.endpoint-url')?.textContent).toBe('hooks.example.com/linkhooks'),
      );
      const rows = document.querySelectorAll('.timeline li');
      // The attempts made and the next one at its real due time; none that may never happen.
      expect(rows).toHaveLength(3);
      expect(rows[0]!.textContent).toMatch(/Attempt 1 due .* \(\+0 ms\) · made .* \(\+0 ms\): 500/);
      expect(rows[1]!.textContent).toMatch(/Attempt 2 due .* \(\+1\.0 min\) · made .* \(\+1\.0 min\): 500/);
      expect(rows[2]!.textContent).toMatch(/Attempt 3 due .* \(\+6\.0 min\) — next$/);
      expect(rows[2]!.className).toBe('next');
      expect(document.body.textContent).toMatch(/up to 3 more attempts/);
      expect(document.querySelectorAll('details.attempt')).toHaveLength(2);
      expect(document.querySelector('.failure')?.textContent).toBe(
        'Your server answered 500: it failed while handling the webhook.',
      );
      expect(document.body.textContent).toMatch(/x-service-signature: (ab){32}/);
      fireEvent.click(screen.getByRole('button', { name: 'Retry now' }));
      await waitFor(() => expect(note()).toBe('Retry scheduled now.'));
    } finally {
      vi.useRealTimers();
    }
  });

  it('stops reading a delivery once it is final, and reads it again after Retry now', async () => {
    let status = 'failed';
    server.use(
      http.get('*/v1/deliveries/:id', () =>
        HttpResponse.json({ delivery: delivery('dlv_f', status), request_body: '{}', attempts: [] }),
      ),
    );
    const reads = vi.spyOn(api, 'delivery');
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      render(<DeliveryDetailView id="dlv_f" />);
      await screen.findByText('dlv_f');
      expect(reads).toHaveBeenCalledTimes(1);
      vi.advanceTimersByTime(10_000);
      expect(reads).toHaveBeenCalledTimes(1);
      status = 'pending';
      fireEvent.click(screen.getByRole('button', { name: 'Retry now' }));
      await waitFor(() => expect(reads).toHaveBeenCalledTimes(2));
      await waitFor(() => expect(document.querySelector('.badge')?.textContent).toBe('pending'));
      vi.advanceTimersByTime(2_000);
      expect(reads).toHaveBeenCalledTimes(3);
    } finally {
      vi.useRealTimers();
      reads.mockRestore();
    }
  });

  it('shows no next attempt while the endpoint is disabled, and says what the delivery waits for', async () => {
    render(<DeliveryDetailView id="dlv_8" />);
    await waitFor(() => expect(document.querySelector('.timeline li.waiting')).not.toBeNull());
    expect(document.querySelector('.timeline li.next')).toBeNull();
    expect(document.querySelector('.timeline-note')?.textContent).toMatch(/endpoint is disabled/);
  });

  it('copies a secret to the clipboard and says so', async () => {
    const writeText = vi.fn(async (_text: string) => {});
    Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true });
    server.use(http.get('*/v1/endpoints/:id/secret', () => HttpResponse.json({ secret: 'whsec_abc' })));
    render(<Endpoints />);
    await screen.findByText(endpoint.url);
    fireEvent.click(screen.getByRole('button', { name: 'Show secret' }));
    fireEvent.click(await screen.findByRole('button', { name: 'Copy secret' }));
    await screen.findByText('Copied');
    expect(writeText).toHaveBeenCalledWith('whsec_abc');
  });

  it('rotates the secret with the grace chosen and says until when the old one signs', async () => {
    const until = '2026-11-29T10:00:00.000Z';
    server.use(
      http.get('*/v1/endpoints', () =>
        HttpResponse.json({
          data: [{ ...endpoint, enabled: true, standard_webhooks: true, previous_secret_expires_at: until }],
        }),
      ),
      http.post('*/v1/endpoints/:id/secret/rotate', async ({ request }) => {
        seen.push(request.clone());
        const { grace_period_seconds } = (await request.json()) as { grace_period_seconds: number };
        return HttpResponse.json({
          secret: 'whsec_new',
          previous_secret_expires_at: grace_period_seconds === 0 ? null : until,
        });
      }),
    );
    render(<Endpoints />);
    await screen.findByText(endpoint.url);
    expect(document.querySelector('.standard-webhooks')?.textContent).toBe('on');
    expect(document.querySelector('.previous-secret')?.textContent).toContain(
      new Date(until).toLocaleString(),
    );
    fireEvent.change(screen.getByLabelText('Grace period'), { target: { value: String(7 * 24 * 3600) } });
    fireEvent.click(screen.getByRole('button', { name: 'Rotate secret' }));
    await waitFor(() => expect(note()).toMatch(/keeps signing X-Service-Signature until/));
    expect(document.querySelector('code.secret')?.textContent).toBe('whsec_new');
    const rotate = seen.find((r) => r.url.endsWith('/secret/rotate'))!;
    expect(await rotate.json()).toEqual({ grace_period_seconds: 604800 });
    expect(rotate.headers.get('x-linkhooks-csrf')).toBe('1');
    // With no grace the old secret stops at once: asked first, and nothing sent when declined.
    const rotations = () => seen.filter((r) => r.url.endsWith('/secret/rotate')).length;
    fireEvent.change(screen.getByLabelText('Grace period'), { target: { value: '0' } });
    const asked = vi.fn(() => false);
    vi.stubGlobal('confirm', asked);
    try {
      fireEvent.click(screen.getByRole('button', { name: 'Rotate secret' }));
      expect(asked).toHaveBeenCalledWith(expect.stringMatching(/^Rotate with no grace\?/));
      expect(rotations()).toBe(1);
      asked.mockReturnValue(true);
      fireEvent.click(screen.getByRole('button', { name: 'Rotate secret' }));
      await waitFor(() => expect(note()).toMatch(/the next attempt is signed with the new one/));
      expect(rotations()).toBe(2);
    } finally {
      vi.unstubAllGlobals();
    }
  });

  it('turns Standard Webhooks on from the edit form and shows a refusal as it comes', async () => {
    server.use(
      http.patch('*/v1/endpoints/:id', ({ request }) => {
        seen.push(request.clone());
        return HttpResponse.json(
          { error: { code: 'secret_rotation_required', message: 'rotate the secret, then turn it on' } },
          { status: 400 },
        );
      }),
    );
    render(<Endpoints />);
    await screen.findByText(endpoint.url);
    expect(document.querySelector('.standard-webhooks')?.textContent).toBe('off');
    fireEvent.click(screen.getByRole('button', { name: 'Edit' }));
    const form = screen.getByRole('form', { name: 'Edit endpoint' });
    fireEvent.click(
      form.querySelector<HTMLInputElement>('input[type="checkbox"][data-field="standard_webhooks"]')!,
    );
    fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    expect((await screen.findByRole('alert')).textContent).toBe(API_ERROR_MESSAGES.secret_rotation_required);
    const patch = seen.find((r) => r.method === 'PATCH')!;
    expect(await patch.json()).toMatchObject({ standard_webhooks: true });
  });

  it('labels test deliveries in the log and in the detail', async () => {
    server.use(
      http.get('*/v1/deliveries', () =>
        HttpResponse.json({
          data: [{ ...delivery('dlv_t'), test: true }, delivery('dlv_p')],
          next_cursor: null,
        }),
      ),
      http.get('*/v1/deliveries/:id', () =>
        HttpResponse.json({
          delivery: { ...delivery('dlv_t'), test: true },
          request_body: '{}',
          attempts: [],
        }),
      ),
    );
    render(<Deliveries filters={{}} />);
    await waitFor(() => expect(document.querySelector('tr[data-delivery="dlv_p"]')).not.toBeNull());
    expect(document.querySelector('tr[data-delivery="dlv_t"] .badge.test')?.textContent).toBe('test');
    expect(document.querySelector('tr[data-delivery="dlv_p"] .badge.test')).toBeNull();
    cleanup();
    render(<DeliveryDetailView id="dlv_t" />);
    await screen.findByText('dlv_t');
    expect(document.querySelector('.badge.test')?.textContent).toBe('test');
  });
});
