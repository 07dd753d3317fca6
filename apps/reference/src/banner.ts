/** The lines a user needs to use the running app: where everything is, and how to sign in. */
import type { EndpointRecord } from '@linkhooks/sender';
import type { ReferenceApp } from './reference-app.js';

export const KEYS = 'c show this again · o ok · f fail (500) · h hang · w wrong secret · q quit';

export function formatBanner(
  app: ReferenceApp,
  settings: { rate: number; timeScale: number; serviceToken: string },
  /** As it is now: its secret may have been rotated since the start. */
  endpoint: EndpointRecord = app.endpoint,
): string {
  const { serviceUrl, apiKey, receiver } = app;
  const schedule = Math.round((10.6 * 3600 * settings.timeScale) / 6) / 10;
  return `
linkhooks reference app
  dashboard        ${app.dashboardUrl}   (sign in with the API key below)
  management API   ${serviceUrl}/v1   (OpenAPI: ${serviceUrl}/v1/openapi.json)
  API key          ${apiKey}
  service token    ${settings.serviceToken}   (POST ${serviceUrl}/internal/v1/events)
  sample receiver  ${receiver.url}   (mode: ${receiver.mode})
  endpoint         ${endpoint.id}, every event, secret ${endpoint.secret}
  traffic          ${settings.rate} events/s; retry schedule ×${settings.timeScale} (all six attempts in ~${schedule} min)

  keys: ${KEYS}
  try:  curl -s ${serviceUrl}/v1/endpoints/${endpoint.id}/deliveries -H "Authorization: Bearer ${apiKey}"
`;
}
