/**
 * `bytes` in a buffer of their own: the same view when it fills its buffer, a copy when it is a
 * slice of a larger one (a pooled Buffer's, an event slab's), which a thread would be posted whole
 * and a kept reference would keep whole.
 */
export const ownBytes = (bytes: Uint8Array): Uint8Array =>
  bytes.byteLength === bytes.buffer.byteLength ? bytes : new Uint8Array(bytes);
