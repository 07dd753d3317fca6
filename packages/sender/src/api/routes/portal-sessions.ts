/**
 * Portal links (design D54): the platform, with its service token, asks for a one-time link that
 * signs one account's user into the dashboard without an API key.
 */
import { z } from 'zod';
import { DEFAULT_PORTAL_TTL_SECONDS, MAX_PORTAL_TTL_SECONDS } from '../../engine/portal-sessions.js';
import { SenderError } from '../../errors.js';
import { checkPlan } from '../auth.js';
import { portalLink } from '../portal.js';
import { defineRoute } from '../route.js';
import { errorSchema, withoutNul } from '../schemas.js';

const portalBody = z
  .strictObject({
    account_id: withoutNul(
      z.string('account_id must be the account’s id').min(1, 'account_id must not be empty').max(100),
      'account_id',
    ),
    ttl_seconds: z
      .number('ttl_seconds must be a number of seconds')
      .int('ttl_seconds must be a whole number')
      .min(1, 'ttl_seconds must be at least 1')
      .max(MAX_PORTAL_TTL_SECONDS, `ttl_seconds must be at most ${MAX_PORTAL_TTL_SECONDS} (an hour)`)
      .optional()
      .describe(`How long the link works: ${DEFAULT_PORTAL_TTL_SECONDS} by default`),
  })
  .meta({ id: 'PortalSessionCreate' });

const portalSchema = z
  .object({
    url: z.string().describe('The link: send the user’s browser there now; it works once'),
    expires_at: z.iso.datetime().describe('When the link stops working, if unused (ISO 8601 UTC)'),
  })
  .meta({ id: 'PortalSession' });

const err = (description: string) => ({ description, schema: errorSchema });

export const portalSessionRoute = defineRoute<z.infer<typeof portalBody>>({
  method: 'post',
  path: '/internal/v1/portal-sessions',
  summary: 'A one-time link that signs the account’s user into the dashboard, without an API key',
  tag: 'Accounts',
  auth: 'service',
  body: { schema: portalBody, required: true },
  responses: {
    201: { description: 'The link, and when it stops working', schema: portalSchema },
    400: err('No account_id, or ttl_seconds is not a whole number from 1 to 3600'),
    401: err('Missing or wrong service token'),
    403: err('The account’s plan has no webhooks'),
    404: err('No such account'),
  },
  async handle({ sender, request, body }) {
    const account = await sender.getAccount(body.account_id);
    if (!account) throw new SenderError('not_found', `no account ${body.account_id}`);
    checkPlan(account);
    const portal = await sender.createPortalSession(account.id, {
      ...(body.ttl_seconds !== undefined ? { ttlSeconds: body.ttl_seconds } : {}),
    });
    return {
      status: 201,
      json: {
        url: portalLink(request.baseUrl, portal.token),
        expires_at: new Date(portal.expiresAt).toISOString(),
      },
    };
  },
});
