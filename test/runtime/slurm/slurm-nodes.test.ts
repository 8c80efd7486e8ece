import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SlurmCli, SlurmCommandFailed } from '../../../src/runtime/slurm/slurm-cli.js';
import { clusterNodeOf, isUnavailable, slurmNodes } from '../../../src/runtime/slurm/slurm-nodes.js';
import { skipSlurm, startSlurmCluster, type SlurmTestCluster } from '../../support/slurm.js';

/** The cluster comes from Slurm (a real slurmctld with four emulated nodes). */
let cluster: SlurmTestCluster;
let cli: SlurmCli;

describe.skipIf(skipSlurm)('the cluster as Slurm reports it', () => {
  beforeAll(() => {
    cluster = startSlurmCluster(4);
    cli = new SlurmCli({ slurmConf: cluster.slurmConf });
  }, 120_000);
  afterAll(() => cluster?.stop());

  it('reads every node with its CPUs, memory, architecture and features as our node properties', async () => {
    const nodes = (await slurmNodes(cli, 'batch')).map(clusterNodeOf);
    expect(nodes.map((n) => n.id)).toEqual(['n1', 'n2', 'n3', 'n4']);
    expect(nodes[0]).toMatchObject({
      id: 'n1',
      cpus: 2,
      memoryGB: 1000 / 1024,
      interconnect: 'InfiniBand',
      island: 'a',
      failureGroup: 'rack1',
      securityPolicies: ['HardenedNode'],
      operatingSystem: 'LINUX',
    });
    expect(nodes[1]).toMatchObject({ id: 'n2', island: 'b' });
    expect(nodes[1]?.failureGroup).toBeUndefined();
    expect(nodes[1]?.securityPolicies).toBeUndefined();
  });

  it('sees a node an operator sets DOWN in Slurm as unavailable, and back when it is resumed', async () => {
    await cli.run('scontrol', ['update', 'nodename=n3', 'state=down', 'reason=issue-13-test']);
    const down = (await slurmNodes(cli)).find((n) => n.name === 'n3');
    expect(down && isUnavailable(down)).toBe(true);
    expect(down?.reason).toBe('issue-13-test');
    await cli.run('scontrol', ['update', 'nodename=n3', 'state=resume']);
    const back = (await slurmNodes(cli)).find((n) => n.name === 'n3');
    expect(back && isUnavailable(back)).toBe(false);
  });

  it('a failing command names itself and what Slurm said', async () => {
    const failure = await cli.run('scontrol', ['show', 'node', 'nosuchnode']).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(SlurmCommandFailed);
    expect((failure as Error).message).toMatch(
      /^scontrol show node nosuchnode failed \(exit 1\): Node nosuchnode not found/,
    );
  });
});

describe('Slurm node features as node properties', () => {
  it('wsag-warm marks a node kept prepared for interactive sessions; other features leave it an ordinary node', () => {
    const node = (features: string) =>
      clusterNodeOf({ name: 'n9', cpus: 2, real_memory: 1024, features, state: 'IDLE' });
    expect(node('ib,wsag-warm')).toMatchObject({ interconnect: 'InfiniBand', warm: true });
    expect(node('ib,warm-ish').warm).toBeUndefined();
  });
});
