/**
 * The generated references follow their sources: the event page lists every field of every event
 * schema, the API page every route of the OpenAPI document, and a change to either changes the page.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { EVENT_DESCRIPTIONS, EVENT_NAMES, eventJsonSchemas } from '@linkhooks/protocol';
import { WEBHOOK_ERROR_STATUS } from '@linkhooks/receiver';
import { openApi } from '@linkhooks/sender/api';
import { describe, expect, it } from 'vitest';
import { renderApiReference, renderEventReference } from '../scripts/render-references.mjs';

type Schema = {
  properties: Record<string, { properties?: Record<string, unknown>; $ref?: string }>;
} & Record<string, unknown>;

const schemas = eventJsonSchemas() as unknown as Record<string, Schema>;
const examples = Object.fromEntries(EVENT_NAMES.map((n) => [n, { event: n }]));
const events = (s: Record<string, Schema>) =>
  renderEventReference({ names: EVENT_NAMES, descriptions: EVENT_DESCRIPTIONS, schemas: s, examples });

function dataOf(schema: Schema): Record<string, unknown> {
  const data = schema.properties.data!;
  if (data.$ref)
    return ((schema.$defs as Record<string, Schema>)[data.$ref.split('/').pop()!]!.properties ?? {}) as never;
  return (data.properties ?? {}) as never;
}

describe('the event reference', () => {
  it('lists every event and every data field of its schema', () => {
    const page = events(schemas);
    for (const name of EVENT_NAMES) {
      expect(page).toContain(`## ${name}`);
      for (const field of Object.keys(dataOf(schemas[name]!))) expect(page).toContain(`| \`${field}\` |`);
    }
    expect(page).toMatch(/\| `link_id` \| integer \| yes \|/);
    expect(page).toMatch(/\| `is_unique` \| boolean \| yes \|/);
  });

  it('changes when a schema changes', () => {
    const changed = structuredClone(schemas);
    const data = dataOf(changed.click!) as Record<string, unknown>;
    data.campaign_id = { type: 'string', description: 'The campaign of the link.' };
    const before = events(schemas);
    const after = events(changed);
    expect(before).not.toContain('campaign_id');
    expect(after).toContain('| `campaign_id` | string | no | The campaign of the link. |');
  });

  it('is the page the build wrote from the current schemas', () => {
    const written = readFileSync(fileURLToPath(new URL('../reference/events.md', import.meta.url)), 'utf8');
    for (const name of EVENT_NAMES) expect(written).toContain(`## ${name}`);
    for (const field of Object.keys(dataOf(schemas['alert.triggered']!))) {
      expect(written).toContain(`\`${field}\``);
    }
  });
});

describe('the management API reference', () => {
  const doc = openApi() as { paths: Record<string, Record<string, unknown>> } & Record<string, unknown>;

  it('lists every route of the OpenAPI document', () => {
    const page = renderApiReference(doc);
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const method of Object.keys(operations))
        expect(page).toContain(`## \`${method.toUpperCase()} ${path}\``);
    }
    expect(page).toContain('### EndpointCreate');
  });

  it('changes when a route changes', () => {
    const changed = structuredClone(doc);
    changed.paths['/v1/endpoints/{id}/archive'] = {
      post: {
        summary: 'Archive the endpoint',
        security: [{ apiKey: [] }],
        responses: { 200: { description: 'Archived' } },
      },
    };
    expect(renderApiReference(doc)).not.toContain('/archive');
    expect(renderApiReference(changed)).toContain('## `POST /v1/endpoints/{id}/archive`');
  });

  it('is the page the build wrote from the current routes', () => {
    const written = readFileSync(fileURLToPath(new URL('../reference/api.md', import.meta.url)), 'utf8');
    expect(written).toBe(renderApiReference(doc));
  });
});

describe('the troubleshooting guide', () => {
  it('has a section for every WebhookError code, with its status', () => {
    const page = readFileSync(fileURLToPath(new URL('../guide/troubleshooting.md', import.meta.url)), 'utf8');
    for (const [code, status] of Object.entries(WEBHOOK_ERROR_STATUS)) {
      expect(page).toContain(`## \`${code}\` — ${status} {#${code}}`);
    }
  });
});
