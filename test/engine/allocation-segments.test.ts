import { describe, expect, it } from 'vitest';
import { toAllocationSegment, toSegment } from '../../src/engine/planning/planning-book.js';
import type { Segment } from '../../src/scheduler/model.js';

describe('a planned piece as stored with its agreement', () => {
  const piece: Segment = {
    start: Date.UTC(2026, 10, 30, 12),
    end: Date.UTC(2026, 10, 30, 14),
    nodes: ['n01', 'n02'],
    spare: ['n03'],
    restart: false,
    intervals: 1,
  };

  it('comes back as it was planned, a best-effort piece that yields to SLA work included', () => {
    expect(toSegment(toAllocationSegment(piece))).toEqual(piece);
    expect(toSegment(toAllocationSegment({ ...piece, yields: true }))).toEqual({ ...piece, yields: true });
    expect(toAllocationSegment(piece)).not.toHaveProperty('yields');
  });

  it('comes back as it was planned, a run on the chance the job needs less than its estimate included', () => {
    expect(toSegment(toAllocationSegment({ ...piece, onChance: true }))).toEqual({ ...piece, onChance: true });
    expect(toAllocationSegment(piece)).not.toHaveProperty('onChance');
  });
});
