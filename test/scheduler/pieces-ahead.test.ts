import { describe, expect, it } from 'vitest';
import { intervalsWithin, pieceMs } from '../../src/scheduler/job-timing.js';
import { admitted, hours, job, reservedAtTwoHours, T0 } from './support.js';

// Checkpointed best-effort work in gaps too short for its run (src/scheduler/plan-start-now.ts, startPiecesNow).
const seconds = (s: number) => T0 + s * 1000;

describe('checkpointed best-effort work in a gap too short for its run', () => {
  it('computes the whole intervals that fit before the next booking, checkpoints, and books the rest after', () => {
    const { pm, reservation } = reservedAtTwoHours();
    const long = admitted(
      pm,
      job({ id: 'long', kind: 'BestEffort', level: 'Standard', nodes: 2, runtimeSeconds: 4 * 3600 }),
    );
    const [piece, rest] = long.segments;
    const gapMs = (reservation.segments[0]?.start as number) - T0;
    const fit = intervalsWithin(pm.shape(long), long.checkpoints, gapMs, false, long.checkpoints.count);
    expect(long.checkpoints.count).toBeGreaterThan(fit);
    expect(fit).toBeGreaterThan(0);
    expect(piece).toMatchObject({ start: T0, intervals: fit, restart: false, yields: true });
    expect(piece?.end).toBe(T0 + pieceMs(pm.shape(long), long.checkpoints, fit, false, 0, false));
    expect(piece?.end).toBeLessThanOrEqual(reservation.segments[0]?.start as number);
    // The rest resumes from the checkpoint after the reservation, with the intervals left.
    expect(rest).toMatchObject({ restart: true, intervals: long.checkpoints.count + 1 - fit });
    expect(rest?.start).toBeGreaterThanOrEqual(reservation.segments[0]?.end as number);
    expect(pm.job('r')?.segments).toEqual(reservation.segments);
  });

  it('leaves a job without checkpoints to wait for a gap its whole run fits', () => {
    const { pm, reservation } = reservedAtTwoHours();
    const legacy = admitted(
      pm,
      job({ id: 'l', kind: 'BestEffort', level: 'Legacy', nodes: 2, runtimeSeconds: 4 * 3600 }),
    );
    expect(legacy.segments).toHaveLength(1);
    expect(legacy.segments[0]?.start).toBeGreaterThanOrEqual(reservation.segments[0]?.end as number);
  });

  it('takes no node a waiting job is booked on', () => {
    const { pm } = reservedAtTwoHours();
    admitted(pm, job({ id: 'running', kind: 'BestEffort', level: 'Legacy', nodes: 2, runtimeSeconds: 1800 }));
    const wide = admitted(pm, job({ id: 'wide', kind: 'BestEffort', level: 'Legacy', nodes: 4, runtimeSeconds: 1800 }));
    const long = admitted(
      pm,
      job({ id: 'long', kind: 'BestEffort', level: 'Standard', nodes: 2, runtimeSeconds: 4 * 3600 }),
    );
    // Two nodes are free until 'wide' starts: the piece ends by then, and 'wide' keeps its place.
    expect(long.segments[0]).toMatchObject({ start: T0, yields: true });
    expect(long.segments[0]?.end).toBeLessThanOrEqual(wide.segments[0]?.start as number);
    expect(pm.job('wide')?.segments).toEqual(wide.segments);
  });

  it('gives way to SLA work that needs its nodes, keeping the intervals it secured', () => {
    const { pm } = reservedAtTwoHours();
    const long = admitted(
      pm,
      job({ id: 'long', kind: 'BestEffort', level: 'Standard', nodes: 2, runtimeSeconds: 4 * 3600 }),
    );
    const planned = long.segments[0]?.intervals as number;
    const deadline = admitted(
      pm,
      job({ id: 'd', kind: 'Deadline', level: 'Standard', nodes: 4, runtimeSeconds: 1200, deadline: T0 + hours(2) }),
      seconds(3000),
    );
    const [ran, rest] = pm.job('long')?.segments ?? [];
    expect(ran?.end).toBeLessThanOrEqual(deadline.segments[0]?.start as number);
    expect(ran?.intervals).toBeLessThan(planned);
    expect(rest).toMatchObject({ restart: true, intervals: long.checkpoints.count + 1 - (ran?.intervals as number) });
  });

  it('is off with bestEffortStartsAhead false', () => {
    const { pm } = reservedAtTwoHours({ bestEffortStartsAhead: false });
    const long = admitted(
      pm,
      job({ id: 'long', kind: 'BestEffort', level: 'Standard', nodes: 2, runtimeSeconds: 4 * 3600 }),
    );
    expect(long.segments).toHaveLength(1);
  });
});

describe('the rest of a run that went ahead in pieces', () => {
  const twoReservations = () => {
    const { pm } = reservedAtTwoHours();
    admitted(
      pm,
      job({
        id: 'r2',
        kind: 'Reservation',
        level: 'Legacy',
        nodes: 4,
        window: { start: T0 + hours(5), end: T0 + hours(6) },
      }),
    );
    const long = admitted(
      pm,
      job({ id: 'long', kind: 'BestEffort', level: 'Standard', nodes: 2, runtimeSeconds: 8 * 3600 }),
    );
    return { pm, long };
  };

  it('goes ahead again in the next gap, as a piece from the checkpoint', () => {
    const { pm, long } = twoReservations();
    const [first, waiting] = long.segments;
    expect(waiting?.start).toBeGreaterThanOrEqual(T0 + hours(6));
    // The first reservation ends early: the nodes are free until the second one's preparation.
    pm.jobFinished('r', T0 + hours(2.5));
    const [ran, piece, rest] = pm.job('long')?.segments ?? [];
    expect(ran).toEqual(first);
    expect(piece).toMatchObject({ start: T0 + hours(2.5), restart: true, yields: true });
    expect(piece?.end).toBeLessThanOrEqual(pm.job('r2')?.segments[0]?.start as number);
    expect(rest).toMatchObject({ restart: true });
    expect(rest?.start).toBeGreaterThanOrEqual(T0 + hours(6));
    expect((first?.intervals as number) + (piece?.intervals as number) + (rest?.intervals as number)).toBe(
      long.checkpoints.count + 1,
    );
  });

  it('gives way while it waits for the rest of its run', () => {
    const { pm } = twoReservations();
    pm.release('r2');
    const [, waiting] = pm.job('long')?.segments ?? [];
    // A deadline job for all four nodes fits before its deadline only where the rest of 'long' is booked.
    const deadline = admitted(
      pm,
      job({ id: 'd', kind: 'Deadline', level: 'Standard', nodes: 4, runtimeSeconds: 1800, deadline: T0 + hours(4) }),
      T0 + hours(1),
    );
    expect(deadline.segments[0]?.start).toBeLessThanOrEqual(waiting?.start as number);
    expect(pm.job('long')?.segments.at(-1)?.start).toBeGreaterThanOrEqual(deadline.segments[0]?.end as number);
  });
});
