import { describe, expect, it } from 'vitest';
import type { Allocation } from '../../src/domain/allocation.js';
import type { ServiceRequest } from '../../src/domain/terms.js';
import { decide, peakUsage, startSlots } from '../../src/scheduler/capacity-check.js';

const now = new Date('2026-11-21T12:00:00Z');
const at = (hhmm: string) => new Date(`2026-11-21T${hhmm}:00Z`);
const job = (over: Partial<ServiceRequest>): ServiceRequest => ({
  nodeCount: 4, libraries: [], requestKind: 'Binding', guaranteeLevel: 'Standard', maxCoveredOutages: 0, securityPolicy: [], ...over,
});
const booking = (start: string, end: string, nodes: number): Allocation => ({ start: at(start), end: at(end), nodes });

describe('peak usage', () => {
  it('counts overlapping bookings and treats intervals as half-open', () => {
    const booked = [booking('12:00', '13:00', 3), booking('12:30', '14:00', 4), booking('13:00', '15:00', 5)];
    expect(peakUsage(booked, at('12:00'), at('16:00'))).toBe(9);
    expect(peakUsage(booked, at('12:00'), at('12:30'))).toBe(3);
    expect(peakUsage(booked, at('15:00'), at('16:00'))).toBe(0);
  });
});

describe('the capacity check of the foundation', () => {
  it('places a deadline job at the earliest start where its nodes are free', () => {
    const booked = [booking('12:00', '13:00', 62)];
    const d = decide(job({ runtimeSeconds: 3600, deadline: at('15:00') }), booked, 64, now);
    expect(d).toEqual({ accepted: true, allocation: { start: at('13:00'), end: at('14:00'), nodes: 4 } });
  });

  it('honours the earliest start', () => {
    const d = decide(job({ runtimeSeconds: 600, earliestStart: at('14:00') }), [], 64, now);
    expect(d).toEqual({ accepted: true, allocation: { start: at('14:00'), end: at('14:10'), nodes: 4 } });
  });

  it('says why a deadline cannot be met', () => {
    const d = decide(job({ runtimeSeconds: 3600, deadline: at('13:30') }), [booking('12:00', '13:00', 62)], 64, now);
    expect(d).toEqual({
      accepted: false,
      reason: 'deadline 2026-11-21T13:30:00Z cannot be met: earliest completion on 4 nodes is 2026-11-21T14:00:00Z (runtime 3600 s, earliest free start 2026-11-21T13:00:00Z)',
    });
  });

  it('books a reservation window only where the nodes are free throughout', () => {
    const booked = [booking('13:00', '14:00', 60)];
    expect(decide(job({ window: { start: at('12:00'), end: at('13:00') } }), booked, 64, now).accepted).toBe(true);
    expect(decide(job({ nodeCount: 5, window: { start: at('12:30'), end: at('13:30') } }), booked, 64, now)).toEqual({
      accepted: false,
      reason: '5 nodes are not free from 2026-11-21T12:30:00Z to 2026-11-21T13:30:00Z: 4 of 64 are free throughout that window',
    });
    expect(decide(job({ nodeCount: 4, window: { start: at('13:00'), end: at('14:00') } }), booked, 64, now).accepted).toBe(true);
  });

  it('refuses more nodes than the cluster has, windows in the past, and jobs of unknown length', () => {
    expect(decide(job({ nodeCount: 65, runtimeSeconds: 60 }), [], 64, now)).toMatchObject({ accepted: false, reason: '65 nodes requested but the cluster has 64' });
    expect(decide(job({ window: { start: at('11:00'), end: at('13:00') } }), [], 64, now)).toMatchObject({ accepted: false, reason: expect.stringMatching(/starts in the past/) });
    expect(decide(job({ window: { start: at('14:00'), end: at('13:00') } }), [], 64, now)).toMatchObject({ accepted: false, reason: expect.stringMatching(/ends .* before it starts/) });
    expect(decide(job({}), [], 64, now)).toMatchObject({ accepted: false, reason: expect.stringMatching(/runtime estimate/) });
  });

  it('books nothing for background jobs (no time promise)', () => {
    expect(decide(job({ guaranteeLevel: 'Background', runtimeSeconds: 60 }), [booking('12:00', '23:00', 64)], 64, now)).toEqual({ accepted: true });
  });
});

describe('startSlots', () => {
  const now = new Date('2026-11-21T12:00:00Z');
  const at = (h: number) => new Date(now.getTime() + h * 3600_000);
  const job: ServiceRequest = {
    nodeCount: 8, runtimeSeconds: 3600, libraries: [], requestKind: 'NonBinding', guaranteeLevel: 'Standard', maxCoveredOutages: 0, securityPolicy: [],
  };

  it('lists back-to-back slots from the earliest start on an empty cluster', () => {
    expect(startSlots(job, [], 16, now, 3).map((s) => s.start)).toEqual([at(0), at(1), at(2)]);
  });

  it('skips times where the nodes are taken and resumes where a booking ends', () => {
    const booked = [{ start: at(0), end: at(2.5), nodes: 10 }];
    expect(startSlots(job, booked, 16, now, 2).map((s) => s.start)).toEqual([at(2.5), at(3.5)]);
  });

  it('offers nothing for more nodes than the cluster has, or for background jobs', () => {
    expect(startSlots({ ...job, nodeCount: 17 }, [], 16, now, 3)).toEqual([]);
    expect(startSlots({ ...job, guaranteeLevel: 'Background' }, [], 16, now, 3)).toEqual([]);
  });
});
