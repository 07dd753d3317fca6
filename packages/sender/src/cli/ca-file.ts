/** `--ca-file`: read once, before the database is opened, so a wrong path stops nothing half-open. */
import { readFileSync } from 'node:fs';
import { type EngineSettings, UsageError } from './options.js';

export function withCaFile(settings: EngineSettings): EngineSettings {
  if (!settings.caFile) return settings;
  let pem: string;
  try {
    pem = readFileSync(settings.caFile, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new UsageError(`--ca-file: cannot read ${settings.caFile} (${code})`);
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) {
    throw new UsageError(`--ca-file: ${settings.caFile} holds no PEM certificate`);
  }
  return { ...settings, ca: pem };
}
