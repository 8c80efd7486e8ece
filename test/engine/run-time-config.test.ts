import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/engine/configuration/config.js';

/** The run-time settings: WSAG_EXECUTOR, WSAG_CPU_SCHEDULING, WSAG_CPU_TIME_SCALE, WSAG_CHECKPOINT_DIR, WSAG_MAX_CHECKPOINT_BYTES, WSAG_PEERS_FILE. */
describe('run-time configuration', () => {
  it('has documented defaults: the local executor, an hour in 3.6 s, checkpoints under the data directory', () => {
    const config = loadConfig({ WSAG_DATA_DIR: '/srv/wsag' });
    expect(config).toMatchObject({
      executor: 'local',
      cpuScheduling: 'normal',
      cpuTimeScale: 0.001,
      checkpointDir: path.resolve('/srv/wsag/checkpoints'),
      maxCheckpointBytes: 1024 ** 3,
    });
    expect(config.peersFile).toBeUndefined();
  });

  it('reads the environment', () => {
    const config = loadConfig({
      WSAG_EXECUTOR: 'simulated',
      WSAG_CPU_SCHEDULING: 'batch',
      WSAG_CPU_TIME_SCALE: '0.01',
      WSAG_CHECKPOINT_DIR: '/tmp/cp',
      WSAG_MAX_CHECKPOINT_BYTES: '2048',
      WSAG_PEERS_FILE: 'examples/peers.json',
    });
    expect(config).toMatchObject({
      executor: 'simulated',
      cpuScheduling: 'batch',
      cpuTimeScale: 0.01,
      checkpointDir: path.resolve('/tmp/cp'),
      maxCheckpointBytes: 2048,
      peersFile: path.resolve('examples/peers.json'),
    });
    expect(loadConfig({}, { dataDir: '/data' }).checkpointDir).toBe(path.resolve('/data/checkpoints'));
  });

  it('fails fast with exact messages', () => {
    const message = (env: Record<string, string>) => {
      try {
        loadConfig(env);
        return undefined;
      } catch (error) {
        if (error instanceof ConfigError) return error.message;
        throw error;
      }
    };
    expect(message({ WSAG_EXECUTOR: 'pbs' })).toBe(
      'WSAG_EXECUTOR must be one of local, simulated, slurm, none, got "pbs"',
    );
    expect(message({ WSAG_CPU_SCHEDULING: 'fifo' })).toBe(
      'WSAG_CPU_SCHEDULING must be one of batch, normal, got "fifo"',
    );
    expect(message({ WSAG_CPU_TIME_SCALE: '0' })).toBe(
      'WSAG_CPU_TIME_SCALE must be greater than 0 (0.001 runs an hour of runtime estimate in 3.6 s), got 0',
    );
    expect(message({ WSAG_CPU_TIME_SCALE: 'fast' })).toBe(
      'WSAG_CPU_TIME_SCALE must be a decimal number such as 0.05, got "fast"',
    );
    expect(message({ WSAG_MAX_CHECKPOINT_BYTES: '10' })).toBe(
      'WSAG_MAX_CHECKPOINT_BYTES must be between 1024 and 1099511627776, got 10',
    );
  });
});
