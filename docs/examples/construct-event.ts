import { constructEvent, isWebhookError } from '@linkhooks/receiver';

/** Verifies a delivery by hand: `rawBody` is the body exactly as received, never a parsed object. */
export function handleDelivery(rawBody: Buffer, signature: string | undefined): number {
  try {
    const event = constructEvent(rawBody, signature, process.env.LINKHOOKS_SECRET!);
    if (event.event === 'click') console.log('click', event.data.click_id);
    return 200;
  } catch (error) {
    if (isWebhookError(error)) {
      console.warn(error.code, error.hint); // e.g. invalid_signature, "the body looks re-serialised"
      return error.status;
    }
    throw error;
  }
}
