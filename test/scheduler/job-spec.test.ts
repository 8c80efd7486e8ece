import { describe, expect, it } from 'vitest';
import type { ServiceRequest } from '../../src/domain/terms.js';
import { jobKindOf, jobSpecFor, requirementsOf } from '../../src/scheduler/job-spec.js';

const now = new Date('2026-11-21T12:00:00Z');
const at = (iso: string) => new Date(iso);

function request(overrides: Partial<ServiceRequest> = {}): ServiceRequest {
  return {
    nodeCount: 4,
    libraries: [],
    requestKind: 'Binding',
    guaranteeLevel: 'Standard',
    maxCoveredOutages: 0,
    securityPolicy: [],
    ...overrides,
  };
}

describe('jobKindOf: what the terms make of a job', () => {
  it('a reservation window makes a Reservation, whatever the guarantee level', () => {
    const window = { start: at('2026-11-21T14:00:00Z'), end: at('2026-11-21T16:00:00Z') };
    expect(jobKindOf(request({ window }))).toBe('Reservation');
    expect(jobKindOf(request({ window, guaranteeLevel: 'Background', deadline: at('2026-11-22T00:00:00Z') }))).toBe(
      'Reservation',
    );
  });

  it('guarantee level Background makes a Background job, even with a deadline', () => {
    expect(jobKindOf(request({ guaranteeLevel: 'Background', runtimeSeconds: 60 }))).toBe('Background');
    expect(
      jobKindOf(request({ guaranteeLevel: 'Background', runtimeSeconds: 60, deadline: at('2026-11-22T00:00:00Z') })),
    ).toBe('Background');
  });

  it('a deadline makes a Deadline job; anything else is BestEffort', () => {
    expect(jobKindOf(request({ runtimeSeconds: 60, deadline: at('2026-11-22T00:00:00Z') }))).toBe('Deadline');
    expect(jobKindOf(request({ runtimeSeconds: 60 }))).toBe('BestEffort');
    expect(
      jobKindOf(request({ runtimeSeconds: 60, earliestStart: at('2026-11-21T13:00:00Z'), guaranteeLevel: 'Legacy' })),
    ).toBe('BestEffort');
  });
});

describe('jobSpecFor: a domain request as the scheduler sees it', () => {
  it('maps every term of a deadline job, times in milliseconds', () => {
    const spec = jobSpecFor(
      'agr-1',
      request({
        nodeCount: 16,
        cpusPerNode: 32,
        memoryPerNodeMiB: 65536,
        interconnect: 'InfiniBand',
        operatingSystem: 'LINUX',
        architecture: 'x86_64',
        libraries: [{ name: 'openmpi', version: '4.1.6', loaded: true }],
        storageGB: 500,
        runtimeSeconds: 7200,
        earliestStart: at('2026-11-21T13:00:00Z'),
        deadline: at('2026-11-22T00:00:00Z'),
        guaranteeLevel: 'Enhanced',
        checkpointFrequency: 2,
        maxCoveredOutages: 2,
      }),
      now,
      { value: 250 },
    );
    expect(spec).toStrictEqual({
      id: 'agr-1',
      kind: 'Deadline',
      level: 'Enhanced',
      nodes: 16,
      runtimeSeconds: 7200,
      earliestStart: Date.parse('2026-11-21T13:00:00Z'),
      deadline: Date.parse('2026-11-22T00:00:00Z'),
      coveredOutages: 2,
      checkpointsPerHour: 2,
      storageGB: 500,
      requirements: {
        memoryPerNodeGB: 64,
        cpusPerNode: 32,
        interconnect: 'InfiniBand',
        operatingSystem: 'LINUX',
        architecture: 'x86_64',
        libraries: [{ name: 'openmpi', version: '4.1.6', loaded: true }],
      },
      value: 250,
      arrival: now.getTime(),
    });
  });

  it('a reservation runs for its window, or for a shorter runtime estimate', () => {
    const window = { start: at('2026-11-21T14:00:00Z'), end: at('2026-11-21T16:00:00Z') };
    expect(jobSpecFor('r', request({ window }), now)).toMatchObject({
      kind: 'Reservation',
      runtimeSeconds: 7200,
      window: { start: Date.parse('2026-11-21T14:00:00Z'), end: Date.parse('2026-11-21T16:00:00Z') },
    });
    expect(jobSpecFor('r', request({ window, runtimeSeconds: 1800 }), now).runtimeSeconds).toBe(1800);
    expect(jobSpecFor('r', request({ window, runtimeSeconds: 9000 }), now).runtimeSeconds).toBe(7200);
  });

  it('leaves out what the request does not name: no storage is 0 GB, no demands restrict nothing', () => {
    const spec = jobSpecFor('j', request({ runtimeSeconds: 60 }), now);
    expect(spec.storageGB).toBe(0);
    expect(spec.requirements).toStrictEqual({});
    expect('deadline' in spec || 'earliestStart' in spec || 'window' in spec || 'checkpointsPerHour' in spec).toBe(
      false,
    );
  });

  it('a job without a runtime estimate gets 0 s (the Planning Manager then asks for one)', () => {
    expect(jobSpecFor('j', request(), now).runtimeSeconds).toBe(0);
  });

  it('values the job at its price, or 1 when the price is unknown or zero', () => {
    expect(jobSpecFor('j', request({ runtimeSeconds: 60 }), now).value).toBe(1);
    expect(jobSpecFor('j', request({ runtimeSeconds: 60 }), now, { value: 0 }).value).toBe(1);
    expect(jobSpecFor('j', request({ runtimeSeconds: 60 }), now, { value: 12.5 }).value).toBe(12.5);
  });

  it('memory per node goes from MiB to GB', () => {
    expect(requirementsOf(request({ memoryPerNodeMiB: 32768 })).memoryPerNodeGB).toBe(32);
    expect(requirementsOf(request({ memoryPerNodeMiB: 1536 })).memoryPerNodeGB).toBe(1.5);
  });

  it('jobs with equal requirements share one frozen object', () => {
    const a = jobSpecFor('a', request({ runtimeSeconds: 60, memoryPerNodeMiB: 2048, cpusPerNode: 4 }), now);
    const b = jobSpecFor('b', request({ runtimeSeconds: 90, memoryPerNodeMiB: 2048, cpusPerNode: 4 }), now);
    expect(b.requirements).toBe(a.requirements);
    expect(Object.isFrozen(a.requirements)).toBe(true);
    expect(
      jobSpecFor('c', request({ runtimeSeconds: 60, memoryPerNodeMiB: 4096, cpusPerNode: 4 }), now).requirements,
    ).not.toBe(a.requirements);
  });
});
