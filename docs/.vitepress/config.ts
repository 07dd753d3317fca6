import { defineConfig } from 'vitepress';

// The docs site. Every code block under guide/ is imported from a file in examples/ that the test
// command runs (and type-checks, the TypeScript ones); reference/ is generated from the schemas and
// the OpenAPI document.
export default defineConfig({
  title: 'linkhooks',
  description: 'Signed webhooks for smart-link clicks, conversions, link changes and alerts.',
  cleanUrls: false,
  lastUpdated: false,
  // guide/parts/ holds markdown that several guides include, not pages of its own.
  srcExclude: ['README.md', 'examples/**', 'test/**', 'scripts/**', 'guide/parts/**'],
  themeConfig: {
    search: { provider: 'local' },
    nav: [
      { text: 'Guide', link: '/guide/quickstart' },
      { text: 'Events', link: '/reference/events' },
      { text: 'API', link: '/reference/api' },
      { text: 'Platform', link: '/platform/getting-started' },
      { text: 'Runbook', link: '/platform/runbook' },
    ],
    sidebar: [
      {
        text: 'Receiving webhooks',
        items: [
          { text: 'Quick start', link: '/guide/quickstart' },
          { text: 'Express', link: '/guide/express' },
          { text: 'Fastify', link: '/guide/fastify' },
          { text: 'Next.js App Router', link: '/guide/next-app-router' },
          { text: 'Next.js Pages Router', link: '/guide/next-pages-router' },
          { text: 'Hono', link: '/guide/hono' },
          { text: 'Node http', link: '/guide/node-http' },
          { text: 'Deno, Bun and Workers', link: '/guide/edge' },
          { text: 'Without the SDK', link: '/guide/verify-without-sdk' },
        ],
      },
      {
        text: 'Delivery',
        items: [
          { text: 'The dashboard', link: '/guide/dashboard' },
          { text: 'Idempotency and at-least-once', link: '/guide/idempotency' },
          { text: 'Replay protection and Standard Webhooks', link: '/guide/standard-webhooks' },
          { text: 'Retries and disabling', link: '/guide/retries' },
          { text: 'Secret rotation', link: '/guide/secret-rotation' },
          { text: 'Troubleshooting', link: '/guide/troubleshooting' },
        ],
      },
      {
        text: 'Reference',
        items: [
          { text: 'Events', link: '/reference/events' },
          { text: 'Management API', link: '/reference/api' },
        ],
      },
      {
        text: 'Platform',
        items: [
          { text: 'Getting started', link: '/platform/getting-started' },
          { text: 'Runbook', link: '/platform/runbook' },
          { text: 'Design', link: '/platform/design' },
        ],
      },
    ],
  },
});
