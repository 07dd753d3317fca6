/**
 * The platform's account routes (design D37), under the service token: list accounts, list an
 * account's keys, rotate and revoke keys, delete an account with everything it owns.
 */
import type { z } from 'zod';
import {
  accountDeletedSchema,
  accountJson,
  accountPageSchema,
  accountsQuery,
  apiKeyJson,
  apiKeyListSchema,
  apiKeySchema,
  rotateBody,
  rotatedJson,
  rotatedSchema,
} from '../account-schemas.js';
import { defineRoute } from '../route.js';
import { errorSchema } from '../schemas.js';

const err = (description: string) => ({ description, schema: errorSchema });
const noAccount = err('No such account');
const unauthorized = err('Missing or wrong service token');

export const accountRoutes = [
  defineRoute<undefined, z.infer<typeof accountsQuery>>({
    method: 'get',
    path: '/internal/v1/accounts',
    summary: 'List accounts by id, a page at a time',
    tag: 'Accounts',
    auth: 'service',
    query: accountsQuery,
    responses: {
      200: { description: 'A page of accounts', schema: accountPageSchema },
      400: err('A malformed cursor or limit'),
      401: unauthorized,
    },
    async handle({ sender, query }) {
      const page = await sender.listAccounts({
        ...(query.cursor !== undefined ? { cursor: query.cursor } : {}),
        ...(query.limit !== undefined ? { limit: query.limit } : {}),
      });
      return { status: 200, json: { data: page.items.map(accountJson), next_cursor: page.nextCursor } };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/internal/v1/accounts/:id/keys',
    summary: 'List an account’s API keys: ids, first characters and times, never a key itself',
    tag: 'Accounts',
    auth: 'service',
    responses: {
      200: { description: 'The keys, oldest first', schema: apiKeyListSchema },
      401: unauthorized,
      404: noAccount,
    },
    async handle({ sender, params }) {
      const keys = await sender.listApiKeys(params.id!);
      return { status: 200, json: { data: keys.map(apiKeyJson) } };
    },
  }),
  defineRoute<z.infer<typeof rotateBody>>({
    method: 'post',
    path: '/internal/v1/accounts/:id/keys/rotate',
    summary: 'A new API key, shown once; the others keep working for grace_seconds (default 3600)',
    tag: 'Accounts',
    auth: 'service',
    body: { schema: rotateBody, required: false },
    responses: {
      201: { description: 'The new key, and when the old ones stop', schema: rotatedSchema },
      400: err('grace_seconds is not a whole number from 0 to 86400'),
      401: unauthorized,
      404: noAccount,
    },
    async handle({ sender, params, body }) {
      const rotated = await sender.rotateApiKey(params.id!, {
        ...(body.grace_seconds !== undefined ? { graceSeconds: body.grace_seconds } : {}),
      });
      return { status: 201, json: rotatedJson(rotated) };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/internal/v1/accounts/:id/keys/:keyId/revoke',
    summary: 'Revoke one API key at once; dashboard sessions signed in with it end too',
    tag: 'Accounts',
    auth: 'service',
    responses: {
      200: { description: 'The revoked key', schema: apiKeySchema },
      401: unauthorized,
      404: err('No such account, or no such key in it'),
    },
    async handle({ sender, params }) {
      return { status: 200, json: apiKeyJson(await sender.revokeApiKey(params.id!, params.keyId!)) };
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/internal/v1/accounts/:id',
    summary: 'Delete an account: its keys stop at once, then everything it owns goes, in bounded steps',
    tag: 'Accounts',
    auth: 'service',
    responses: {
      200: { description: 'Deleted', schema: accountDeletedSchema },
      401: unauthorized,
      404: noAccount,
    },
    async handle({ sender, ingest, params }) {
      ingest.forget(params.id!);
      const { removed } = await sender.deleteAccount(params.id!);
      ingest.forget(params.id!); // an event looked up while the deletion ran
      return { status: 200, json: { id: params.id!, deleted: true as const, removed } };
    },
  }),
];
