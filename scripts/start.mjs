// `pnpm start`: installs, builds, and runs the receiver quick start — a real Express server using
// @linkhooks/receiver, sent one signed delivery of every event and one forged delivery.
import { install, pnpm, run } from './lib.mjs';

install();
pnpm(['build'], { label: 'pnpm build' });
run(process.execPath, ['packages/receiver/examples/quickstart.mjs'], {
  label: 'node packages/receiver/examples/quickstart.mjs',
});
