// The event run.mjs's parts and service-ab.mjs publish: the protocol's sample click (fixed-length
// values), with a numbered id and a filler that makes every body exactly BODY_BYTES long.
import { sampleEventData } from '@linkhooks/protocol';

export const BODY_BYTES = 1024;
const ID_DIGITS = 8; // click ids `clk_00000042` / `lat_00000042`: every body has the same length

const clickData = (clickId, filler) => ({
  ...sampleEventData('click'),
  click_id: clickId,
  destination_url: `https://shop.example.com/summer?utm_source=linkhooks&utm_medium=smartlink&utm_content=${filler}`,
});

/** The envelope the bare loop and the job-queue peers send, as the service stores it. */
export const envelopeBytes = (data) =>
  Buffer.from(JSON.stringify({ event: 'click', timestamp: '2026-11-22T09:00:00Z', data }));

const probe = envelopeBytes(clickData('clk_'.padEnd(4 + ID_DIGITS, '0'), '')).length;

/** Clicks whose bodies are `bytes` long: click number `n`, its id `<prefix>_000000nn`. */
export function clicksOf(bytes) {
  if (bytes < probe) throw new Error(`a click takes at least ${probe} bytes`);
  const filler = 'abcdefghijklmnopqrstuvwxyz0123456789'.repeat(Math.ceil(bytes / 36)).slice(0, bytes - probe);
  return (prefix, n) => clickData(`${prefix}_${String(n).padStart(ID_DIGITS, '0')}`, filler);
}

/** Click number `n` of BODY_BYTES, its id `<prefix>_000000nn` (a prefix of three letters keeps the length). */
export const click = clicksOf(BODY_BYTES);
