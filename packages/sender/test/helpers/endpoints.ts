/**
 * An account's endpoint, created through the engine (so its URL passes the same checks as in
 * production) and pointed at a route of its own on the test receiver, which verifies deliveries
 * with the endpoint's secret.
 */
import type { EventName } from '@linkhooks/protocol';
import type { Sender } from '../../src/engine/sender.js';
import type { SenderStore } from '../../src/store/port.js';
import { ACCOUNT } from './harness.js';
import type { Behaviour, HttpsReceiver } from './https-receiver.js';

export interface EndpointOptions {
  /** The account that owns it; ACCOUNT unless given. */
  account?: string;
  /** The events it subscribes to; click unless given. */
  events?: EventName[];
  /** The receiver route it points at; a fresh one unless given. */
  route?: string;
  /** How that route answers from the start; 'ok' unless given. */
  behaviour?: Behaviour;
  /** The host name in its URL, for a test that resolves names itself; localhost unless given. */
  host?: string;
}

let routes = 0;

/**
 * Creates the endpoint and registers its route and secret with the receiver.
 *
 * @example
 * const { route, endpoint } = await addEndpoint(sender, receiver, { events: ['click'], behaviour: 'hang' });
 */
export async function addEndpoint(sender: Sender, receiver: HttpsReceiver, options: EndpointOptions = {}) {
  const route = options.route ?? `ep${routes++}`;
  const origin = options.host ? `https://${options.host}:${receiver.port}` : receiver.origin;
  const endpoint = await sender.createEndpoint(options.account ?? ACCOUNT, {
    url: `${origin}/hooks/${route}`,
    events: options.events ?? ['click'],
  });
  receiver.route(route, endpoint.secret);
  if (options.behaviour) receiver.behave(route, options.behaviour);
  return { route, endpoint };
}

/**
 * An endpoint with the id given, written to a store directly (no receiver), subscribed to clicks.
 *
 * @example
 * await storeEndpoint(store, 'acct_a', 'ep_a', T0);
 */
export const storeEndpoint = (store: SenderStore, accountId: string, id: string, now: number) =>
  store.createEndpoint({
    id,
    accountId,
    url: `https://${id}.example.com/hook`,
    events: ['click'],
    secret: 'whsec_test',
    description: null,
    now,
  });
