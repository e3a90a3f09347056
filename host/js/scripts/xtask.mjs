// `cargo xtask NAME` at the repository root (the one driver of component
// builds, xtask/): builds and composes, and returns the path it printed.

import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const workspace = fileURLToPath(new URL('../../../', import.meta.url));

export function xtask(name) {
  const r = spawnSync(process.env.CARGO ?? 'cargo', ['xtask', name], {
    cwd: workspace,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (r.error || r.status !== 0) {
    console.error(`cargo xtask ${name} failed${r.error ? `: ${r.error.message}` : ''}`);
    process.exit(1);
  }
  return r.stdout.trim().split('\n').pop();
}
