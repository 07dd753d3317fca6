/**
 * Schema-valid sample data for each event: realistic values, fresh ids on every call. Shared by the
 * sender's test event (`POST /v1/endpoints/:id/test`) and the receiver's testing kit, so the sample a
 * customer is sent and the one their tests build are the same shape.
 */
import type { EventName } from './events.js';
import type { DataOf } from './schemas.js';

/** A random id with a prefix (`clk_…`), for sample data. */
export function sampleId(prefix: string): string {
  const bytes = new Uint8Array(10);
  globalThis.crypto.getRandomValues(bytes);
  return (
    prefix +
    Array.from(bytes, (b) => b.toString(36).padStart(2, '0'))
      .join('')
      .slice(0, 16)
  );
}

const linkState = () => ({
  link_id: 48213,
  name: 'Summer sale',
  slug: 'summer-sale',
  is_active: true,
  rules_count: 3,
});

/** Fresh sample data for an event: realistic values, new ids on every call. */
export function sampleEventData<N extends EventName>(name: N): DataOf<N> {
  const samples: { [K in EventName]: () => DataOf<K> } = {
    click: () => ({
      click_id: sampleId('clk_'),
      link_id: 48213,
      link_slug: 'summer-sale',
      destination_url: 'https://shop.example.com/summer?utm_source=linkhooks',
      ip: '203.0.113.42',
      country: 'DE',
      region: 'Berlin',
      city: 'Berlin',
      device: 'mobile',
      browser: 'Chrome',
      os: 'Android',
      referer: 'https://news.example.org/deals',
      is_unique: true,
      fraud_flags: [],
    }),
    conversion: () => ({
      conversion_id: sampleId('cnv_'),
      click_id: sampleId('clk_'),
      link_id: 48213,
      link_slug: 'summer-sale',
      revenue: 49.9,
      currency: 'EUR',
      country: 'DE',
      device: 'mobile',
    }),
    'link.created': linkState,
    'link.updated': () => ({ ...linkState(), rules_count: 4, changed: ['rules'] }),
    'link.deleted': () => ({ link_id: 48213, slug: 'summer-sale' }),
    'alert.triggered': () => ({
      alert_id: 77,
      alert_name: 'Click spike on summer-sale',
      metric: 'clicks',
      condition: 'greater_than',
      threshold: 1000,
      current_value: 1432,
      link_id: 48213,
      link_slug: 'summer-sale',
    }),
  };
  // An event name from JavaScript is not checked by the types: a typo says so, not "is not a function".
  if (!Object.hasOwn(samples, name)) {
    throw new TypeError(
      `no event is named ${JSON.stringify(name)}. Events: ${Object.keys(samples).join(', ')}.`,
    );
  }
  return samples[name]() as DataOf<N>;
}
