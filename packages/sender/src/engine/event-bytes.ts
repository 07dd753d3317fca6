/**
 * An event's bytes, written into slabs of SLAB_BYTES shared by the events that follow (design
 * D64). Node's own `Buffer.from` takes a new 8 KiB pool every dozen events of a click's size, and
 * in the service those allocations were 2.4% of the event loop's time in single-event ingest; a
 * slab eight times larger is one allocation in a hundred events. A body is a view of its slab, as
 * a pooled Buffer is of Node's pool: a kept body keeps its slab.
 */
const SLAB_BYTES = 64 * 1024;
/** A text longer than this gets an allocation of its own rather than most of a slab. */
const OWN_ALLOCATION_CHARS = SLAB_BYTES / 16;

const encoder = new TextEncoder();
let slab = new Uint8Array(0);
let used = 0;

/** The UTF-8 bytes of `text`, as a Buffer. */
export function eventBytes(text: string): Buffer {
  if (text.length > OWN_ALLOCATION_CHARS) return Buffer.from(text);
  // At most three bytes a UTF-16 unit: the room is checked before writing, never after.
  if (used + text.length * 3 > slab.length) {
    slab = new Uint8Array(SLAB_BYTES);
    used = 0;
  }
  const { written } = encoder.encodeInto(text, slab.subarray(used));
  const bytes = Buffer.from(slab.buffer, used, written);
  used += written;
  return bytes;
}
