// Writes reference/events.md and reference/api.md from the built packages (run by `build`).
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { EVENT_DESCRIPTIONS, EVENT_NAMES, eventJsonSchemas, sampleEventData } from '@linkhooks/protocol';
import { openApi } from '@linkhooks/sender/api';
import { renderApiReference, renderEventReference } from './render-references.mjs';

/** Sample data with fixed ids, so the page is the same on every build. */
function example(name) {
  const data = sampleEventData(name);
  const fixed = { click_id: 'clk_01jd8x3k9q2w5e7r', conversion_id: 'cnv_01jd8x3m2b6c8d0f' };
  for (const [key, value] of Object.entries(fixed)) if (key in data) data[key] = value;
  return { event: name, timestamp: '2026-11-22T09:30:00Z', data };
}

const here = (path) => fileURLToPath(new URL(path, import.meta.url));
const events = renderEventReference({
  names: EVENT_NAMES,
  descriptions: EVENT_DESCRIPTIONS,
  schemas: eventJsonSchemas(),
  examples: Object.fromEntries(EVENT_NAMES.map((n) => [n, example(n)])),
});
// The pages are generated, not committed: the folder does not exist in a fresh clone.
mkdirSync(here('../reference'), { recursive: true });
writeFileSync(here('../reference/events.md'), events);
writeFileSync(here('../reference/api.md'), renderApiReference(openApi()));
console.log('wrote reference/events.md and reference/api.md');
