/**
 * Managing an endpoint's record: create, read, list, update and rotate its secret, checking what a
 * customer sends and handing endpoints out as they are now (design D38, D43).
 */
import { generateSecret } from '@linkhooks/protocol';
import type { Clock } from '../clock.js';
import type { AddressPolicy, LookupFunction } from '../delivery/address-guard.js';
import { createResolverLookup, systemFallback } from '../delivery/resolver-lookup.js';
import { newId } from '../domain/ids.js';
import { SenderError } from '../errors.js';
import type { SenderStore } from '../store/port.js';
import type { EndpointRecord } from '../store/records.js';
import { checkEndpointUrl, checkEvents } from './endpoint-input.js';
import { checkStandardWebhooks, endpointAt, rotationPatch } from './endpoint-secrets.js';
import type { createQuotaGuard } from './quotas.js';
import type { Sender } from './sender-interface.js';

export interface EndpointManagementDeps {
  store: SenderStore;
  clock: Clock;
  addressPolicy: AddressPolicy;
  resolve?: LookupFunction | undefined;
  quota: ReturnType<typeof createQuotaGuard>;
}

type EndpointManagement = Pick<
  Sender,
  'createEndpoint' | 'updateEndpoint' | 'rotateSecret' | 'getEndpoint' | 'listEndpoints'
> & {
  /** The endpoint as it is now: a previous secret past its grace is no longer part of it. */
  live(endpoint: EndpointRecord): EndpointRecord;
};

export function endpointManagement(deps: EndpointManagementDeps): EndpointManagement {
  const { store, clock, addressPolicy, quota } = deps;
  // As deliveries look names up: a tenant's names whose server never answers hold no one else's.
  const resolve =
    deps.resolve ??
    createResolverLookup(addressPolicy.allowPrivateNetworks ? { fallback: systemFallback() } : {});
  const live = (endpoint: EndpointRecord) => endpointAt(endpoint, clock.now());
  const liveFound = (endpoint: EndpointRecord | null, id: string) => {
    if (endpoint === null) throw new SenderError('not_found', `no endpoint ${id}`);
    return live(endpoint);
  };
  const getEndpoint = async (accountId: string, id: string) =>
    liveFound(await store.getEndpoint(accountId, id), id);

  return {
    live,
    getEndpoint,
    listEndpoints: async (accountId) => (await store.listEndpoints(accountId)).map(live),

    async createEndpoint(accountId, input) {
      const events = checkEvents(input?.events);
      // The quota before the URL's lookup: an account at its quota looks nothing up.
      quota.endpoint((await store.listEndpoints(accountId)).length);
      const url = await checkEndpointUrl(input?.url, addressPolicy, resolve);
      const secret = generateSecret();
      const standardWebhooks = checkStandardWebhooks(input.standardWebhooks, secret) ?? false;
      const now = clock.now();
      // Counted again where the endpoint is stored: requests made together all pass the count above.
      const created = await store.createEndpoint(
        {
          id: newId('ep', now),
          accountId,
          url,
          events,
          secret,
          description: input.description ?? null,
          standardWebhooks,
          now,
        },
        quota.endpoint,
      );
      return live(created);
    },

    async updateEndpoint(accountId, id, patch) {
      const current = await getEndpoint(accountId, id);
      const standardWebhooks = checkStandardWebhooks(patch.standardWebhooks, current.secret);
      const next = {
        ...(standardWebhooks !== undefined ? { standardWebhooks } : {}),
        ...(patch.url !== undefined
          ? { url: await checkEndpointUrl(patch.url, addressPolicy, resolve) }
          : {}),
        ...(patch.events !== undefined ? { events: checkEvents(patch.events) } : {}),
        ...(patch.description !== undefined ? { description: patch.description } : {}),
      };
      return liveFound(await store.updateEndpoint(accountId, id, next, clock.now()), id);
    },

    async rotateSecret(accountId, id, options = {}) {
      const now = clock.now();
      return liveFound(await store.updateEndpoint(accountId, id, rotationPatch(options, now), now), id);
    },
  };
}
