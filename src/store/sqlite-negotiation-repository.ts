import Database from 'better-sqlite3';
import type { Hold, Negotiation, NegotiationOfferRecord, NegotiationState } from '../domain/negotiation.js';
import { firstHoldExpiry, liveHolds } from '../domain/negotiation.js';
import type { AuditNote, NegotiationFilter, NegotiationRepository } from '../engine/ports.js';
import { listingSql } from './by-creation.js';
import { reviveAllocation, reviveRequest, type Json } from './json-dates.js';
import { RecentNegotiations } from './recent-negotiations.js';
import { rowUpdate } from './row-update.js';
import { SqliteAuditLog } from './sqlite-audit-log.js';
import type { SqliteConnection } from './sqlite-connection.js';

export interface NegotiationRow {
  id: string;
  initiator: string;
  state: string;
  live_holds: number;
  created_at: number;
  updated_at: number;
  /** JSON of NegotiationRecord. */
  record: string;
  /** When its first hold in state Held expires (ms); null without one (or written before migration 10). */
  hold_expires_at: number | null;
}

/** A row of negotiation_offers: one offer's document, written once. */
export interface OfferDocumentRow {
  negotiation_id: string;
  offer_id: string;
  document: string;
}

/** The part of a Negotiation kept as JSON: everything without a column or a table of its own (offer documents). */
type NegotiationRecord = Omit<Negotiation, 'id' | 'initiator' | 'state' | 'createdAt' | 'updatedAt' | 'offers'> & {
  offers: Array<Omit<NegotiationOfferRecord, 'document'>>;
};

export const columns = 'id, initiator, state, live_holds, created_at, updated_at, record, hold_expires_at';

/**
 * Negotiations in SQLite, normally in the same database (and on the same connection) as
 * the agreements: see SqliteStore, and SqliteConnection for why writes are durable.
 */
export class SqliteNegotiationRepository implements NegotiationRepository {
  private readonly insertStmt: Database.Statement<[NegotiationRow]>;
  private readonly updateRow: (row: NegotiationRow) => boolean;
  private readonly getStmt: Database.Statement<[string], NegotiationRow>;
  private readonly insertDocumentStmt: Database.Statement<[OfferDocumentRow]>;
  private readonly documentsStmt: Database.Statement<[string], OfferDocumentRow>;
  private readonly storedOffersStmt: Database.Statement<[string], string>;
  private readonly recent = new RecentNegotiations();

  /** Prefer SqliteStore. Audit notes go to `audit`, on the same connection. */
  constructor(
    private readonly connection: SqliteConnection,
    private readonly audit: SqliteAuditLog = new SqliteAuditLog(connection),
  ) {
    const { db } = connection;
    this.insertStmt = db.prepare(
      `INSERT INTO negotiations (${columns})
       VALUES (@id, @initiator, @state, @live_holds, @created_at, @updated_at, @record, @hold_expires_at)`,
    );
    this.updateRow = rowUpdate(db, 'negotiations', columns, ['initiator', 'created_at']);
    this.getStmt = db.prepare(`SELECT ${columns} FROM negotiations WHERE id = ?`);
    this.insertDocumentStmt = db.prepare(
      'INSERT INTO negotiation_offers (negotiation_id, offer_id, document) VALUES (@negotiation_id, ' +
        '@offer_id, @document)',
    );
    this.documentsStmt = db.prepare(
      'SELECT negotiation_id, offer_id, document FROM negotiation_offers WHERE negotiation_id = ?',
    );
    this.storedOffersStmt = db
      .prepare<[string], string>('SELECT offer_id FROM negotiation_offers WHERE negotiation_id = ?')
      .pluck();
  }

  async insert(negotiation: Negotiation, notes: readonly AuditNote[] = []): Promise<void> {
    const row = toRow(negotiation);
    try {
      this.audit.appendWith(about(negotiation.id, notes), () => {
        this.insertStmt.run(row);
        for (const document of offerDocuments(negotiation)) this.insertDocumentStmt.run(document);
      });
    } catch (error) {
      if (error instanceof Database.SqliteError && error.code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
        throw new Error(`negotiation ${negotiation.id} already exists`, { cause: error });
      }
      throw error;
    }
    this.recent.written(negotiation);
    await this.durable(negotiation.id);
  }

  async update(negotiation: Negotiation, notes: readonly AuditNote[] = []): Promise<void> {
    const row = toRow(negotiation);
    this.audit.appendWith(about(negotiation.id, notes), () => {
      // Thrown inside the transaction: nothing is appended either.
      if (!this.updateRow(row)) throw new Error(`negotiation ${negotiation.id} does not exist`);
      // Documents never change: only those of offers added since the last write are stored.
      const stored = this.recent.storedOfferIds(negotiation.id) ?? new Set(this.storedOffersStmt.all(negotiation.id));
      for (const document of offerDocuments(negotiation, stored)) this.insertDocumentStmt.run(document);
    });
    this.recent.written(negotiation);
    await this.durable(negotiation.id);
  }

  async get(id: string): Promise<Negotiation | undefined> {
    const recent = this.recent.get(id);
    if (recent !== undefined) return recent;
    const row = this.getStmt.get(id);
    return row === undefined ? undefined : fromRow(row, this.documentsStmt.all(id));
  }

  async list(filter: NegotiationFilter = {}): Promise<Negotiation[]> {
    const { where, params, limit } = listingSql(filter, ...holdConditions(filter));
    return this.connection
      .statement<Array<string | number>, NegotiationRow>(
        `SELECT ${columns} FROM negotiations ${where} ORDER BY created_at, id${limit}`,
      )
      .all(...params)
      .map((row) => fromRow(row, this.documentsStmt.all(row.id)));
  }

  /** Once `id`'s write is on disk; a write whose commit failed is not read back from memory. */
  private async durable(id: string): Promise<void> {
    try {
      await this.connection.durable();
    } catch (error) {
      this.recent.forget(id);
      throw error;
    }
  }

  /** Closes the connection, which the other repositories of its SqliteStore share. */
  async close(): Promise<void> {
    this.connection.close();
  }
}

/**
 * The listing's conditions on holds, with their parameters. live_holds > 0 is written exactly
 * as the partial index's WHERE, so both databases can use negotiations_with_live_holds. A
 * NULL hold_expires_at (a row written before the column existed) is listed as due, so the
 * expiry timer reads it and the write that follows sets it.
 */
export function holdConditions(filter: NegotiationFilter): [string[], number[]] {
  if (filter.holdExpiringBy !== undefined) {
    return [['live_holds > 0', '(hold_expires_at IS NULL OR hold_expires_at <= ?)'], [filter.holdExpiringBy.getTime()]];
  }
  return filter.withLiveHolds === true ? [['live_holds > 0'], []] : [[], []];
}

function about(id: string, notes: readonly AuditNote[]) {
  return notes.map((note) => ({ ...note, subject: { kind: 'negotiation', id } as const }));
}

export function toRow(negotiation: Negotiation): NegotiationRow {
  const { id, initiator, state, createdAt, updatedAt, offers, ...rest } = negotiation;
  const record: NegotiationRecord = { ...rest, offers: offers.map(({ document, ...offer }) => offer) };
  return {
    id,
    initiator,
    state,
    live_holds: liveHolds(negotiation).length,
    created_at: createdAt.getTime(),
    updated_at: updatedAt.getTime(),
    // Dates become ISO 8601 strings here; fromRow turns them back into Dates.
    record: JSON.stringify(record),
    hold_expires_at: firstHoldExpiry(negotiation)?.getTime() ?? null,
  };
}

/** The rows of negotiation_offers for the negotiation's offers, but for those in `stored`. */
export function offerDocuments(negotiation: Negotiation, stored: ReadonlySet<string> = new Set()): OfferDocumentRow[] {
  return negotiation.offers
    .filter((offer) => !stored.has(offer.offerId))
    .map((offer) => ({ negotiation_id: negotiation.id, offer_id: offer.offerId, document: offer.document }));
}

/**
 * The negotiation from its row and its offers' documents. The revivers below destructure
 * every Date field out of the parsed JSON and assign it back as a Date only when present,
 * so absent optional fields stay absent.
 */
export function fromRow(row: NegotiationRow, documents: readonly OfferDocumentRow[]): Negotiation {
  const { expiresAt, offers, ...rest } = JSON.parse(row.record) as Json<NegotiationRecord>;
  const documentOf = new Map(documents.map((d) => [d.offer_id, d.document]));
  return {
    ...rest,
    id: row.id,
    initiator: row.initiator,
    state: row.state as NegotiationState,
    offers: offers.map((offer) => {
      const document = documentOf.get(offer.offerId);
      if (document === undefined)
        throw new Error(`negotiation ${row.id}: offer ${offer.offerId} has no stored document`);
      return reviveOffer({ ...offer, document });
    }),
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
    expiresAt: new Date(expiresAt),
  };
}

function reviveOffer(json: Json<NegotiationOfferRecord>): NegotiationOfferRecord {
  const { createdAt, expirationTime, request, hold, ...rest } = json;
  const offer: NegotiationOfferRecord = { ...rest, createdAt: new Date(createdAt), request: reviveRequest(request) };
  if (expirationTime !== undefined) offer.expirationTime = new Date(expirationTime);
  if (hold !== undefined) offer.hold = reviveHold(hold);
  return offer;
}

function reviveHold(json: Json<Hold>): Hold {
  const { allocation, expiresAt, endedAt, ...rest } = json;
  return {
    ...rest,
    allocation: reviveAllocation(allocation),
    expiresAt: new Date(expiresAt),
    ...(endedAt !== undefined ? { endedAt: new Date(endedAt) } : {}),
  };
}
