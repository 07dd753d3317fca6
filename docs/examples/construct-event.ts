import { constructEvent, isKnownEvent, isWebhookError } from '@linkhooks/receiver';

/** Verifies a delivery by hand: `rawBody` is the body exactly as received, never a parsed object. */
export function handleDelivery(rawBody: Buffer, signature: string | undefined): number {
  try {
    const event = constructEvent(rawBody, signature, process.env.LINKHOOKS_SECRET!);
    // Comparing the name narrows the event: here event.data.click_id is a string.
    if (event.event === 'click') console.log('click', event.data.click_id, event.data.country);
    // A name outside the catalogue (a newer sender): acknowledge it, so it is not retried.
    if (!isKnownEvent(event)) console.log('not handled yet:', event.event);
    return 200;
  } catch (error) {
    if (isWebhookError(error)) {
      console.warn(error.code, error.hint); // e.g. invalid_signature, "The body looks re-formatted …"
      return error.status;
    }
    throw error;
  }
}
