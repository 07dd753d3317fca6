import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

const run = promisify(execFile);

it('the README quick start example verifies every event and refuses a forged delivery', async () => {
  const script = fileURLToPath(new URL('../examples/quickstart.mjs', import.meta.url));
  const { stdout } = await run(process.execPath, [script], { timeout: 30_000 });
  for (const name of [
    'click',
    'conversion',
    'link.created',
    'link.updated',
    'link.deleted',
    'alert.triggered',
  ]) {
    expect(stdout).toContain(`Signed ${name} delivery → 200 {"received":true}`);
    expect(stdout).toContain(`handled ${name}`);
  }
  expect(stdout).toMatch(/Forged click delivery → 401 .*"code":"invalid_signature"/);
});
