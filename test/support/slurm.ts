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
  /** slurmctld alone stopped (its jobs run on under slurmd), and started again from its saved state. */
  stopController(): void;
  startController(): void;
}

export const slurmAvailable = fs.existsSync('/usr/sbin/slurmctld') && fs.existsSync('/usr/sbin/munged');
export const skipSlurm = process.env.WSAG_SKIP_SLURM === '1' && !slurmAvailable;

/** `warm`: how many of the last nodes carry wsag-warm (kept prepared for interactive sessions). */
export function startSlurmCluster(nodes = 4, options: { warm?: number } = {}): SlurmTestCluster {
  if (!slurmAvailable)
    throw new Error(
      'Slurm and MUNGE are not installed: apt-get install slurm-wlm munge (or WSAG_SKIP_SLURM=1 to skip these tests)',
    );
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsag-slurm-'));
  const script = path.join(projectRoot, 'scripts/slurm-test-cluster.sh');
  const ports = reservePorts();
  try {
    execFileSync(script, ['start', dir, String(nodes), String(ports.base), String(options.warm ?? 0)], {
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 90_000,
    });
  } catch (error) {
    ports.release();
    throw new Error(`${script} start ${dir} failed: ${String((error as { stderr?: Buffer }).stderr ?? error)}`);
  }
  return {
    dir,
    slurmConf: path.join(dir, 'slurm.conf'),
    nodes: Array.from({ length: nodes }, (_, i) => `n${i + 1}`),
    stopController: () => void execFileSync(script, ['stop-controller', dir], { stdio: 'ignore', timeout: 30_000 }),
    startController: () => void execFileSync(script, ['start-controller', dir], { stdio: 'ignore', timeout: 90_000 }),
    stop: () => {
      execFileSync(script, ['stop', dir], { stdio: 'ignore', timeout: 60_000 });
      fs.rmSync(dir, { recursive: true, force: true });
      ports.release();
    },
  };
}

/**
 * A block of 20 ports for one test cluster (slurmctld, slurmd, one per node), below Linux's
 * ephemeral range so no port-0 server takes one, and claimed with an atomic mkdir so test
 * files starting clusters at the same time never share a block (two clusters on the same
 * ports would talk to each other's daemons, and MUNGE refuses the other key).
 */
function reservePorts(): { base: number; release(): void } {
  const locks = path.join(os.tmpdir(), 'wsag-slurm-ports');
  fs.mkdirSync(locks, { recursive: true });
  const blocks = 400; // 12000 .. 19999
  const first = Math.floor(Math.random() * blocks);
  for (let i = 0; i < blocks; i++) {
    const base = 12000 + ((first + i) % blocks) * 20;
    const lock = path.join(locks, String(base));
    try {
      fs.mkdirSync(lock);
    } catch {
      // Taken; a lock left by a killed test run two hours ago is free again.
      try {
        if (Date.now() - fs.statSync(lock).mtimeMs < 2 * 3600_000) continue;
        fs.rmSync(lock, { recursive: true, force: true });
        fs.mkdirSync(lock);
      } catch {
        continue;
      }
    }
    return { base, release: () => fs.rmSync(lock, { recursive: true, force: true }) };
  }
  throw new Error(`no free block of ports for a Slurm test cluster under ${locks}`);
}
