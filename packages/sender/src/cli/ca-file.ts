/**
 * `--ca-file` / `LINKHOOKS_CA_FILE`: read once, before the database is opened, so a wrong path
 * stops nothing half-open; a refusal names the one it came from.
 */
import { readFileSync } from 'node:fs';
import { unreadable } from './file-error.js';
import { type EngineSettings, UsageError } from './options.js';

export function withCaFile(settings: EngineSettings): EngineSettings {
  if (!settings.caFile) return settings;
  const { path, source } = settings.caFile;
  let pem: string;
  try {
    pem = readFileSync(path, 'utf8');
  } catch (error) {
    throw new UsageError(`${source}: cannot read ${path} (${unreadable(error)})`);
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) {
    throw new UsageError(`${source}: ${path} holds no PEM certificate`);
  }
  return { ...settings, ca: pem };
}
