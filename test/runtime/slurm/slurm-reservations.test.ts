import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Allocation } from '../../../src/domain/allocation.js';
import { SlurmCli } from '../../../src/runtime/slurm/slurm-cli.js';
import {
  expandHostlist,
  plannedReservations,
  reservationName,
  SlurmReservations,
} from '../../../src/runtime/slurm/slurm-reservations.js';
import { skipSlurm, startSlurmCluster, type SlurmTestCluster } from '../../support/slurm.js';

describe('Slurm host lists', () => {
  it.each([
    ['n[1-3,5]', ['n1', 'n2', 'n3', 'n5']],
    ['n1,n4', ['n1', 'n4']],
    ['ib[008-010],gpu1', ['ib008', 'ib009', 'ib010', 'gpu1']],
    ['(null)', []],
  ])('%s', (list, names) => expect(expandHostlist(list)).toEqual(names));
});

describe('the plan as reservations', () => {
  const now = new Date('2026-11-25T12:00:00Z');
  const at = (minutes: number) => new Date(now.getTime() + minutes * 60_000);
  const booking = (segments: Array<[number, number, string[], string[]]>): Allocation => ({
    start: at(segments[0]![0]),
    end: at(segments.at(-1)![1]),
    nodes: segments[0]![2].length,
    segments: segments.map(([s, e, nodeIds, spareNodeIds]) => ({
      start: at(s),
      end: at(e),
      nodeIds,
      spareNodeIds,
      restart: false,
      intervals: 1,
    })),
  });

  it('one reservation per piece not yet ended, spares included, named after the booking', () => {
    const booked = new Map([
      [
        'agr-1',
        booking([
          [-30, 10, ['n2'], []],
          [10, 60, ['n3', 'n1'], ['n4']],
        ]),
      ],
      ['hold:offer:7', booking([[5, 65, ['n2'], []]])],
      ['old', booking([[-60, -5, ['n1'], []]])],
    ]);
    expect(plannedReservations(booked, now)).toEqual([
      { name: 'wsag_agr-1_0', nodes: ['n2'], start: at(-30), end: at(10) },
      { name: 'wsag_agr-1_1', nodes: ['n1', 'n3', 'n4'], start: at(10), end: at(60) },
      { name: 'wsag_hold-offer-7_0', nodes: ['n2'], start: at(5), end: at(65) },
    ]);
    expect(reservationName('hold:offer:7', 0)).toBe('wsag_hold-offer-7_0');
  });
});

/** The plan's bookings as reservations in a real Slurm. */
describe.skipIf(skipSlurm)('reconciling Slurm with the plan', () => {
  let cluster: SlurmTestCluster;
  let cli: SlurmCli;
  let reservations: SlurmReservations;
  beforeAll(() => {
    cluster = startSlurmCluster(4);
    cli = new SlurmCli({ slurmConf: cluster.slurmConf });
    reservations = new SlurmReservations(cli, 'root');
  }, 120_000);
  afterAll(() => cluster?.stop());

  const soon = (minutes: number) => new Date(Math.ceil(Date.now() / 1000) * 1000 + minutes * 60_000);

  it('creates what is new, moves what changed, deletes what the plan dropped, and leaves other reservations alone', async () => {
    const a = { name: 'wsag_a_0', nodes: ['n1', 'n2'], start: soon(10), end: soon(70) };
    const b = { name: 'wsag_b_0', nodes: ['n3'], start: soon(10), end: soon(40) };
    await cli.run('scontrol', [
      'create',
      'ReservationName=maintenance',
      `StartTime=${soon(200).toISOString().slice(0, 19)}`,
      'Duration=10',
      'Nodes=n4',
      'Users=root',
    ]);
    expect(await reservations.reconcile([a, b], new Date())).toEqual({
      created: ['wsag_a_0', 'wsag_b_0'],
      updated: [],
      deleted: [],
      failed: [],
    });
    expect(await reservations.owned()).toEqual([a, b]);
    // Nothing changed: nothing to do.
    expect(await reservations.reconcile([a, b], new Date())).toEqual({
      created: [],
      updated: [],
      deleted: [],
      failed: [],
    });

    // a moves off n2 and ends later; b is gone from the plan; c takes n2 at a's old times.
    const movedA = { ...a, nodes: ['n1'], end: soon(90) };
    const c = { name: 'wsag_c_0', nodes: ['n2'], start: soon(10), end: soon(70) };
    expect(await reservations.reconcile([movedA, c], new Date())).toEqual({
      created: ['wsag_c_0'],
      updated: ['wsag_a_0'],
      deleted: ['wsag_b_0'],
      failed: [],
    });
    expect(await reservations.owned()).toEqual([movedA, c]);
    // Slurm's own view: another reservation of n2 at those times is refused.
    const clash = await cli
      .run('scontrol', [
        'create',
        'ReservationName=intruder',
        `StartTime=${soon(20).toISOString().slice(0, 19)}`,
        'Duration=5',
        'Nodes=n2',
        'Users=root',
      ])
      .then(
        () => 'created',
        (e: Error) => e.message,
      );
    expect(clash).toMatch(/Requested nodes are busy|overlap/i);
    expect((await cli.run('scontrol', ['show', 'reservation', 'maintenance'])).includes('Nodes=n4')).toBe(true);

    expect(await reservations.reconcile([], new Date())).toEqual({
      created: [],
      updated: [],
      deleted: ['wsag_a_0', 'wsag_c_0'],
      failed: [],
    });
    expect(await reservations.owned()).toEqual([]);
  });

  it('a reservation that began between reading it and moving it keeps its start; its end and nodes still follow', async () => {
    const begins = new Date(Math.ceil(Date.now() / 1000) * 1000 + 2_000);
    const read = new Date();
    const r = { name: 'wsag_d_0', nodes: ['n1'], start: begins, end: soon(30) };
    await reservations.reconcile([r], read);
    while (Date.now() < begins.getTime() + 1_500) await new Promise((wake) => setTimeout(wake, 250));
    // The plan, as of `read` (before the reservation began), wants it from now on two nodes and longer.
    const moved = { ...r, nodes: ['n1', 'n2'], start: new Date(read.getTime() - 1_000), end: soon(40) };
    expect(await reservations.reconcile([moved], read)).toEqual({
      created: [],
      updated: ['wsag_d_0'],
      deleted: [],
      failed: [],
    });
    expect(await reservations.owned()).toEqual([{ ...moved, start: begins }]);
    await reservations.reconcile([], new Date());
  });
});
