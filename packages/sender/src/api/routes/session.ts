/**
 * Dashboard sign-in: the API key is exchanged once for an HttpOnly session cookie (design D22;
 * its SameSite, design D55), so the key never sits in the browser's storage or a URL.
 */
import { z } from 'zod';
import type { AccountRecord } from '../../store/records.js';
import { checkPlan, invalidApiKey } from '../auth.js';
import { defineRoute } from '../route.js';
import { errorSchema } from '../schemas.js';
import { clearedSessionCookie, sessionCookie } from '../sessions.js';

const signInBody = z
  .strictObject({ api_key: z.string().min(1).max(200).describe('The account API key (lhk_…)') })
  .meta({ id: 'SessionCreate' });
const sessionSchema = z
  .object({ account: z.object({ id: z.string(), name: z.string(), plan: z.string() }) })
  .meta({ id: 'Session' });
const accountJson = (a: AccountRecord) => ({ account: { id: a.id, name: a.name, plan: a.plan } });

export const sessionRoutes = [
  defineRoute<z.infer<typeof signInBody>>({
    method: 'post',
    path: '/v1/session',
    summary: 'Dashboard sign-in: exchanges an API key for an HttpOnly session cookie',
    tag: 'Session',
    auth: 'none',
    body: { schema: signInBody, required: true },
    responses: {
      201: { description: 'Signed in; the cookie is set', schema: sessionSchema },
      400: { description: 'No API key given', schema: errorSchema },
      401: { description: 'The API key is not valid', schema: errorSchema },
      403: { description: 'The account’s plan has no webhooks', schema: errorSchema },
    },
    async handle({ sender, sessions, request, body }) {
      const holder = await sender.authenticateKey(body.api_key);
      if (!holder) throw invalidApiKey();
      const account = checkPlan(holder.account);
      if (request.sessionId) sessions.delete(request.sessionId);
      const session = sessions.create(account.id, holder.key.id);
      return {
        status: 201,
        json: accountJson(account),
        headers: { 'set-cookie': sessionCookie(session.id, session.maxAgeSeconds, request.cookies) },
      };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/session',
    summary: 'The signed-in account',
    tag: 'Session',
    auth: 'account',
    responses: { 200: { description: 'The account', schema: sessionSchema } },
    async handle({ account }) {
      return { status: 200, json: accountJson(account) };
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/v1/session',
    summary: 'Sign out: the session ends and its cookie is cleared',
    tag: 'Session',
    auth: 'none',
    responses: { 204: { description: 'Signed out' } },
    async handle({ sessions, request }) {
      if (request.sessionId) sessions.delete(request.sessionId);
      return { status: 204, headers: { 'set-cookie': clearedSessionCookie(request.cookies) } };
    },
  }),
];
