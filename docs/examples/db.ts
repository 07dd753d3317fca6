// Stands in for your database in these examples: each guide's handlers write here, and the docs'
// tests read it back to prove the handler ran with the verified event.
import type { ClickEvent, ConversionEvent, WebhookEvent } from '@linkhooks/receiver';

export const db = {
  clicks: [] as ClickEvent['data'][],
  conversions: [] as ConversionEvent['data'][],
  events: [] as WebhookEvent[],
  async saveClick(data: ClickEvent['data']) {
    this.clicks.push(data);
  },
  async saveConversion(data: ConversionEvent['data']) {
    this.conversions.push(data);
  },
  async saveEvent(event: WebhookEvent) {
    this.events.push(event);
  },
  clear() {
    this.clicks.length = 0;
    this.conversions.length = 0;
    this.events.length = 0;
  },
};
