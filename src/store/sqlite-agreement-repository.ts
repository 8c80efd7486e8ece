import Database from 'better-sqlite3';
import type { Agreement, AgreementState, GuaranteeTermStatus, ServiceTermStatus } from '../domain/agreement.js';
import type { Allocation } from '../domain/allocation.js';
import type { ServiceRequest } from '../domain/terms.js';
import type { AgreementFilter, AgreementRepository, AuditNote } from '../engine/ports.js';
import { listingSql } from './by-creation.js';
import { reviveAllocation, reviveRequest, type Json } from './json-dates.js';
import { rowUpdate } from './row-update.js';
import { SqliteAuditLog } from './sqlite-audit-log.js';
import { SqliteConnection } from './sqlite-connection.js';

export interface AgreementRow {
  id: string;
  name: string | null;
  template_id: string;
  template_name: string;
  initiator: string;
  state: string;
  service_terms: string;
  guarantee_terms: string;
  request: string;
  allocation_start: number | null;
  allocation_end: number | null;
  allocation_nodes: number | null;
  /** JSON of AllocationPlan (migration 4); NULL when the allocation has none. */
  allocation_plan: string | null;
  document: string;
  /** JSON of AgreementExtras; NULL when none is set. */
  extras: string | null;
  created_at: number;
  updated_at: number;
}

/**
 * Optional fields without a column of their own (migration 2); `migratedTo.at` and `expiresAt` are the Dates among
 * them.
 */
type AgreementExtras = Pick<
  Agreement,
  | 'price'
  | 'priceFactor'
  | 'origin'
  | 'alternative'
  | 'usedBy'
  | 'acceptanceEpr'
  | 'eligibleParties'
  | 'migratedTo'
  | 'expiresAt'
>;

/** The allocation's optional plan fields (migration 4): everything but start, end and nodes, which have columns. */
type AllocationPlan = Omit<Allocation, 'start' | 'end' | 'nodes'>;

export const columns =
  'id, name, template_id, template_name, initiator, state, service_terms, guarantee_terms, request, ' +
  'allocation_start, allocation_end, allocation_nodes, allocation_plan, document, extras, created_at, updated_at';
const ordered = 'ORDER BY created_at, id';
/** The columns a listing reads: the document column is left unread when the filter asks for that. */
export const listedColumns = (filter: AgreementFilter): string =>
  filter.withoutDocument ? columns.replace('document', "'' AS document") : columns;

/**
 * Agreements in SQLite (better-sqlite3), on a connection it may share with the other
 * repositories of a SqliteStore (see SqliteConnection for why writes are durable).
 */
export class SqliteAgreementRepository implements AgreementRepository {
  private readonly insertStmt: Database.Statement<[AgreementRow]>;
  private readonly updateRow: (row: AgreementRow) => boolean;
  private readonly getStmt: Database.Statement<[string], AgreementRow>;

  /**
   * Prefer SqliteStore, or open() / memory() for agreements alone. Audit notes go to `audit`, on the same connection.
   */
  constructor(
    private readonly connection: SqliteConnection,
    private readonly audit: SqliteAuditLog = new SqliteAuditLog(connection),
  ) {
    const { db } = connection;
    this.insertStmt = db.prepare(
      `INSERT INTO agreements (${columns}) VALUES (@id, @name, @template_id, @template_name, @initiator, @state,
         @service_terms, @guarantee_terms, @request, @allocation_start, @allocation_end, @allocation_nodes,
         @allocation_plan, @document, @extras, @created_at, @updated_at)`,
    );
    this.updateRow = rowUpdate(db, 'agreements', columns, ['initiator', 'created_at']);
    this.getStmt = db.prepare(`SELECT ${columns} FROM agreements WHERE id = ?`);
  }

  /** Opens (creating if needed) the database file with a connection of its own. */
  static open(file: string): SqliteAgreementRepository {
    return new SqliteAgreementRepository(SqliteConnection.open(file));
  }

  /** A private in-memory database, for tests. */
  static memory(): SqliteAgreementRepository {
    return new SqliteAgreementRepository(SqliteConnection.memory());
  }

  async insert(agreement: Agreement, notes: readonly AuditNote[] = [], committed?: () => void): Promise<void> {
    const row = toRow(agreement);
    try {
      this.audit.appendWith(about(agreement.id, notes), () => this.insertStmt.run(row));
    } catch (error) {
      if (error instanceof Database.SqliteError && error.code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
        throw new Error(`agreement ${agreement.id} already exists`, { cause: error });
      }
      throw error;
    }
    committed?.();
    await this.connection.durable();
  }

  async update(agreement: Agreement, notes: readonly AuditNote[] = [], committed?: () => void): Promise<void> {
    const row = toRow(agreement);
    this.audit.appendWith(about(agreement.id, notes), () => {
      // Thrown inside the transaction: nothing is appended either.
      if (!this.updateRow(row)) throw new Error(`agreement ${agreement.id} does not exist`);
    });
    // Readable now; the log is synced in order, so what `committed` frees is durable before anything using it.
    committed?.();
    await this.connection.durable();
  }

  async get(id: string): Promise<Agreement | undefined> {
    const row = this.getStmt.get(id);
    return row === undefined ? undefined : fromRow(row);
  }

  async list(filter: AgreementFilter = {}): Promise<Agreement[]> {
    const { where, params, limit } = listingSql(filter);
    const sql = `SELECT ${listedColumns(filter)} FROM agreements ${where} ${ordered}${limit}`;
    return this.connection
      .statement<Array<string | number>, AgreementRow>(sql)
      .all(...params)
      .map(fromRow);
  }

  async countByState(): Promise<Partial<Record<AgreementState, number>>> {
    const rows = this.connection
      .statement<[], { state: AgreementState; n: number }>('SELECT state, COUNT(*) AS n FROM agreements GROUP BY state')
      .all();
    return Object.fromEntries(rows.map((r) => [r.state, r.n]));
  }

  /** Closes the connection, which the other repositories of its SqliteStore share. */
  async close(): Promise<void> {
    this.connection.close();
  }
}

function about(id: string, notes: readonly AuditNote[]) {
  return notes.map((note) => ({ ...note, subject: { kind: 'agreement', id } as const }));
}

export function toRow(a: Agreement): AgreementRow {
  return {
    id: a.id,
    name: a.name ?? null,
    template_id: a.templateId,
    template_name: a.templateName,
    initiator: a.initiator,
    state: a.state,
    service_terms: JSON.stringify(a.serviceTerms),
    guarantee_terms: JSON.stringify(a.guaranteeTerms),
    // Dates become ISO 8601 strings here; fromRow turns them back into Dates.
    request: JSON.stringify(a.request),
    allocation_start: a.allocation?.start.getTime() ?? null,
    allocation_end: a.allocation?.end.getTime() ?? null,
    allocation_nodes: a.allocation?.nodes ?? null,
    allocation_plan: allocationPlanJson(a.allocation),
    document: a.document,
    extras: extrasJson(a),
    created_at: a.createdAt.getTime(),
    updated_at: a.updatedAt.getTime(),
  };
}

/** Optional fields that were absent stay absent (not present-but-undefined), matching what was inserted. */
export function fromRow(row: AgreementRow): Agreement {
  const agreement: Agreement = {
    id: row.id,
    templateId: row.template_id,
    templateName: row.template_name,
    initiator: row.initiator,
    state: row.state as Agreement['state'],
    serviceTerms: JSON.parse(row.service_terms) as ServiceTermStatus[],
    guaranteeTerms: JSON.parse(row.guarantee_terms) as GuaranteeTermStatus[],
    request: reviveRequest(JSON.parse(row.request) as Json<ServiceRequest>),
    document: row.document,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
  if (row.name !== null) agreement.name = row.name;
  // Parsed JSON has no undefined values, so absent extras stay absent.
  if (row.extras !== null) Object.assign(agreement, reviveExtras(JSON.parse(row.extras) as Json<AgreementExtras>));
  if (row.allocation_start !== null && row.allocation_end !== null && row.allocation_nodes !== null) {
    const plan = row.allocation_plan === null ? {} : (JSON.parse(row.allocation_plan) as Json<AllocationPlan>);
    agreement.allocation = reviveAllocation({
      ...plan,
      start: new Date(row.allocation_start).toISOString(),
      end: new Date(row.allocation_end).toISOString(),
      nodes: row.allocation_nodes,
    });
  }
  return agreement;
}

/** Dates become ISO 8601 strings; `{}` (no plan fields set) is stored as NULL. */
function allocationPlanJson(allocation: Allocation | undefined): string | null {
  if (!allocation) return null;
  const { start: _start, end: _end, nodes: _nodes, ...plan } = allocation;
  const json = JSON.stringify(plan satisfies AllocationPlan);
  return json === '{}' ? null : json;
}

/** JSON.stringify leaves out undefined fields, so `{}` means none is set. */
function extrasJson(a: Agreement): string | null {
  const extras: AgreementExtras = {
    price: a.price,
    priceFactor: a.priceFactor,
    origin: a.origin,
    alternative: a.alternative,
    usedBy: a.usedBy,
    acceptanceEpr: a.acceptanceEpr,
    eligibleParties: a.eligibleParties,
    migratedTo: a.migratedTo,
    expiresAt: a.expiresAt,
  };
  const json = JSON.stringify(extras);
  return json === '{}' ? null : json;
}

function reviveExtras(json: Json<AgreementExtras>): AgreementExtras {
  const { migratedTo, expiresAt, ...rest } = json;
  const extras: AgreementExtras = rest;
  if (migratedTo !== undefined) extras.migratedTo = { ...migratedTo, at: new Date(migratedTo.at) };
  if (expiresAt !== undefined) extras.expiresAt = new Date(expiresAt);
  return extras;
}
