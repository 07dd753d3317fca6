// Writes schemas/<event>.json from the built package, so non-TypeScript receivers and the docs
// read the same contract the zod schemas enforce.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { envelopeJsonSchema, eventJsonSchemas } from '../dist/index.js';

const dir = join(dirname(fileURLToPath(import.meta.url)), '..', 'schemas');
mkdirSync(dir, { recursive: true });
const write = (name, schema) =>
  writeFileSync(join(dir, `${name}.json`), `${JSON.stringify(schema, null, 2)}\n`);
write('envelope', envelopeJsonSchema());
for (const [name, schema] of Object.entries(eventJsonSchemas())) write(name, schema);
