import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { projectRoot } from './server.js';

/**
 * A real Slurm cluster for a test file: scripts/slurm-test-cluster.sh starts MUNGE,
 * slurmctld and one slurmd per emulated node under a temporary directory; `stop` shuts it
 * down. Slurm and MUNGE come from Debian (.ci/run installs them); where they are missing the
 * tests fail, unless WSAG_SKIP_SLURM=1 says to skip them (CI never does).
 */
export interface SlurmTestCluster {
  dir: string;
  slurmConf: string;
  nodes: string[];
  stop(): void;
}

export const slurmAvailable = fs.existsSync('/usr/sbin/slurmctld') && fs.existsSync('/usr/sbin/munged');
export const skipSlurm = process.env.WSAG_SKIP_SLURM === '1' && !slurmAvailable;

export function startSlurmCluster(nodes = 4): SlurmTestCluster {
  if (!slurmAvailable) throw new Error('Slurm and MUNGE are not installed: apt-get install slurm-wlm munge (or WSAG_SKIP_SLURM=1 to skip these tests)');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-slurm-'));
  const script = path.join(projectRoot, 'scripts/slurm-test-cluster.sh');
  try {
    execFileSync(script, ['start', dir, String(nodes)], { stdio: ['ignore', 'pipe', 'pipe'], timeout: 90_000 });
  } catch (error) {
    throw new Error(`${script} start ${dir} failed: ${String((error as { stderr?: Buffer }).stderr ?? error)}`);
  }
  return {
    dir,
    slurmConf: path.join(dir, 'slurm.conf'),
    nodes: Array.from({ length: nodes }, (_, i) => `n${i + 1}`),
    stop: () => {
      execFileSync(script, ['stop', dir], { stdio: 'ignore', timeout: 60_000 });
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
