import type { Allocation } from '../../domain/allocation.js';
import { scontrolRecords, type SlurmCli } from './slurm-cli.js';

/**
 * The plan in Slurm: every booked piece of every booking (an agreement or a
 * preparatory hold) is a Slurm advance reservation on the piece's nodes (its spares
 * included) for the piece's times, so nothing else in Slurm can take those nodes then.
 * Reservations are named `wsag_<booking>_<piece>`; the server owns every reservation with
 * that prefix and no other. `reconcile` makes Slurm match the plan: it deletes what the
 * plan no longer has, moves what changed, and creates what is new, in that order so a
 * booking that moves onto nodes another one left finds them free. It is idempotent: run it
 * after every change of the plan and at start-up (which adopts or removes what an earlier
 * run of the server left).
 */
export interface SlurmReservation {
  name: string;
  /** Sorted node names. */
  nodes: string[];
  start: Date;
  end: Date;
}

export interface ReconcileReport {
  created: string[];
  updated: string[];
  deleted: string[];
  failed: Array<{ name: string; error: string }>;
}

export const reservationPrefix = 'wsag_';

/** The reservation of `booking`'s piece `piece` (booking keys may hold ':', which Slurm names may not). */
export function reservationName(booking: string, piece = 0): string {
  return `${reservationPrefix}${booking.replace(/[^A-Za-z0-9_-]/g, '-')}_${piece}`;
}

/**
 * What the plan asks of Slurm at `now`: one reservation per piece that has not ended, from now at the earliest, to
 * whole seconds.
 */
export function plannedReservations(booked: ReadonlyMap<string, Allocation>, now: Date): SlurmReservation[] {
  const wanted: SlurmReservation[] = [];
  for (const [key, allocation] of booked) {
    (allocation.segments ?? []).forEach((segment, piece) => {
      const end = ceilSecond(segment.end);
      if (end.getTime() <= now.getTime()) return;
      const nodes = [...new Set([...segment.nodeIds, ...segment.spareNodeIds])].sort();
      if (nodes.length === 0) return;
      wanted.push({ name: reservationName(key, piece), nodes, start: floorSecond(segment.start), end });
    });
  }
  return wanted;
}

export class SlurmReservations {
  constructor(
    private readonly cli: SlurmCli,
    /** Who may run jobs in the reservations: the user the server submits as. */
    private readonly user: string,
  ) {}

  /** The reservations the server owns, as Slurm has them. */
  async owned(): Promise<SlurmReservation[]> {
    const text = await this.cli.run('scontrol', ['show', 'reservation', '--oneliner']);
    return scontrolRecords(text)
      .filter((r) => (r.ReservationName ?? '').startsWith(reservationPrefix))
      .map((r) => ({
        name: r.ReservationName as string,
        nodes: expandHostlist(r.Nodes ?? '').sort(),
        start: utc(r.StartTime as string),
        end: utc(r.EndTime as string),
      }));
  }

  async reconcile(wanted: readonly SlurmReservation[], now: Date): Promise<ReconcileReport> {
    const report: ReconcileReport = { created: [], updated: [], deleted: [], failed: [] };
    const have = new Map((await this.owned()).map((r) => [r.name, r]));
    const want = new Map(wanted.map((r) => [r.name, r]));
    const attempt = async (name: string, list: string[], work: () => Promise<unknown>) => {
      try {
        await work();
        list.push(name);
      } catch (error) {
        report.failed.push({ name, error: (error as Error).message });
      }
    };
    for (const [name] of have)
      if (!want.has(name))
        await attempt(name, report.deleted, () => this.cli.run('scontrol', ['delete', `ReservationName=${name}`]));
    for (const [name, r] of want) {
      const current = have.get(name);
      if (!current) continue;
      const started = current.start.getTime() <= now.getTime();
      // A reservation that has begun keeps its start (Slurm refuses to move it); its nodes and end follow the plan.
      const startAgrees =
        started || (r.start.getTime() > now.getTime() && current.start.getTime() === r.start.getTime());
      if (startAgrees && current.end.getTime() === r.end.getTime() && current.nodes.join(',') === r.nodes.join(','))
        continue;
      const args = ['update', `ReservationName=${name}`, `EndTime=${slurmTime(r.end)}`, `Nodes=${r.nodes.join(',')}`];
      if (startAgrees) await attempt(name, report.updated, () => this.cli.run('scontrol', args));
      else await attempt(name, report.updated, () => this.moveStart(args, startTime(r.start, now)));
    }
    for (const [name, r] of want) {
      if (have.has(name)) continue;
      await attempt(name, report.created, () =>
        this.cli.run('scontrol', [
          'create',
          `ReservationName=${name}`,
          `StartTime=${startTime(r.start, now)}`,
          `EndTime=${slurmTime(r.end)}`,
          `Nodes=${r.nodes.join(',')}`,
          `Users=${this.user}`,
          'Flags=IGNORE_JOBS',
        ]),
      );
    }
    return report;
  }

  /**
   * Moves a reservation's start with its end and nodes. `now` was read before Slurm was asked, so the start read
   * as ahead may have passed meanwhile; Slurm then refuses any new start, and the reservation keeps the one it has.
   */
  private async moveStart(args: string[], start: string): Promise<void> {
    try {
      await this.cli.run('scontrol', [...args, `StartTime=${start}`]);
    } catch (error) {
      if (!/Reservation already started/i.test((error as Error).message)) throw error;
      await this.cli.run('scontrol', args);
    }
  }
}

/** Slurm's time format, in UTC: the CLI runs with TZ=UTC (SlurmCli), so both sides read it alike. */
export function slurmTime(d: Date): string {
  return d.toISOString().slice(0, 19);
}

function utc(text: string): Date {
  return new Date(`${text}Z`);
}

/** n[1-3,5],m7 -> n1 n2 n3 n5 m7 (Slurm's host list syntax, one bracket per name). */
export function expandHostlist(list: string): string[] {
  const names: string[] = [];
  for (const part of list.match(/[^,[]+(\[[^\]]*\])?[^,]*/g) ?? []) {
    const m = /^(.*?)\[([^\]]*)\](.*)$/.exec(part);
    if (!m) {
      if (part && part !== '(null)') names.push(part);
      continue;
    }
    const [, prefix, ranges, suffix] = m as unknown as [string, string, string, string];
    for (const range of ranges.split(',')) {
      const [from, to] = range.split('-') as [string, string | undefined];
      const width = from.length;
      for (let i = Number(from); i <= Number(to ?? from); i++)
        names.push(`${prefix}${String(i).padStart(width, '0')}${suffix}`);
    }
  }
  return names;
}

const floorSecond = (d: Date) => new Date(Math.floor(d.getTime() / 1000) * 1000);
const ceilSecond = (d: Date) => new Date(Math.ceil(d.getTime() / 1000) * 1000);
/**
 * A piece that should have begun already is reserved from `now`, Slurm's own present: it takes
 * no start in the past, and a start a second ahead would keep a session's job waiting for it.
 */
const startTime = (start: Date, now: Date) => (start.getTime() > now.getTime() ? slurmTime(start) : 'now');
