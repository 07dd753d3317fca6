import type { Endpoint } from './api.js';
import { linkProps } from './navigation.js';

/** An endpoint's URL without its scheme, its middle cut when long, so a table row stays narrow. */
export function shortUrl(url: string, max = 40): string {
  const bare = url.replace(/^https?:\/\//, '');
  if (bare.length <= max) return bare;
  const keep = Math.floor((max - 1) / 2);
  return `${bare.slice(0, keep)}…${bare.slice(bare.length - keep)}`;
}

/** An endpoint as the log names it: a link to its page, its short URL and its description. */
export function EndpointName({ id, endpoint }: { id: string; endpoint: Endpoint | undefined }) {
  return (
    <a class="endpoint-name" {...linkProps({ name: 'endpoint', id })} title={endpoint?.url ?? id}>
      <span class="endpoint-url">{endpoint ? shortUrl(endpoint.url) : id}</span>
      {endpoint?.description && <span class="endpoint-description">{endpoint.description}</span>}
    </a>
  );
}
