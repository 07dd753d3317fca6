/** The dashboard's addresses (dashboard/src/routes.ts, design D48): each view to a path and back. */
import { describe, expect, it } from 'vitest';
import { pathOf, type View, viewOf } from '../dashboard/src/routes.js';

describe('routes', () => {
  it('gives every view a path that reads back as the same view', () => {
    const views: View[] = [
      { name: 'endpoints' },
      { name: 'endpoint', id: 'ep_1' },
      { name: 'delivery', id: 'dlv_01' },
      { name: 'log', filters: {} },
      { name: 'log', filters: { endpoint: 'ep_1', status: 'failed', event: 'click', q: 'clk 1/2&x' } },
    ];
    for (const view of views) {
      const path = pathOf(view);
      const url = new URL(path, 'http://dashboard.test');
      expect(viewOf(url.pathname, url.search)).toEqual(view);
    }
    expect(pathOf(views[4]!)).toBe('/dashboard/log?endpoint=ep_1&status=failed&event=click&q=clk+1%2F2%26x');
  });

  it('shows the endpoints for the bare address and any address it does not know', () => {
    for (const path of [
      '/dashboard',
      '/dashboard/',
      '/dashboard/nothing',
      '/dashboard/deliveries/',
      '/dashboard/deliveries/a/b',
    ])
      expect(viewOf(path, '')).toEqual({ name: 'endpoints' });
    expect(viewOf('/dashboard/log/', '?q=&status=held')).toEqual({
      name: 'log',
      filters: { status: 'held' },
    });
  });
});
