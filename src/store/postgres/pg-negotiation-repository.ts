import type { Negotiation } from '../../domain/negotiation.js';
import type { AuditNote, NegotiationFilter, NegotiationRepository } from '../../engine/ports.js';
import { listingSql } from '../by-creation.js';
import {
  columns,
  fromRow,
  holdConditions,
  offerDocuments,
  toRow,
  type NegotiationRow,
  type OfferDocumentRow,
} from '../sqlite-negotiation-repository.js';
import { literalInsert, numbered, type PgConnection, type Queryable } from './pg-connection.js';
import type { PgAuditLog } from './pg-audit-log.js';

const values = (r: NegotiationRow) => [
  r.id,
  r.initiator,
  r.state,
  r.live_holds,
  r.created_at,
  r.updated_at,
  r.record,
  r.hold_expires_at,
];

/** Negotiations in PostgreSQL, a change and its audit entries in one transaction (see PgStore). */
export class PgNegotiationRepository implements NegotiationRepository {
  constructor(
    private readonly connection: PgConnection,
    private readonly audit: PgAuditLog,
  ) {}

  async insert(negotiation: Negotiation, notes: readonly AuditNote[] = []): Promise<void> {
    try {
      // Sent with the COMMIT (and the audit entries): a new negotiation is stored in one round trip.
      await this.audit.appendWith(about(negotiation.id, notes), async (tx) => {
        void tx.withCommit([
          literalInsert('negotiations', columns, [values(toRow(negotiation))]),
          ...insertDocuments(offerDocuments(negotiation)),
        ]);
      });
    } catch (error) {
      if ((error as { code?: string }).code === '23505')
        throw new Error(`negotiation ${negotiation.id} already exists`, { cause: error });
      throw error;
    }
  }

  async update(negotiation: Negotiation, notes: readonly AuditNote[] = []): Promise<void> {
    await this.audit.appendWith(about(negotiation.id, notes), async (tx) => {
      // The update and the offers already stored, in one round trip.
      const { rows } = await tx.query<{ updated: number; stored: string[] }>(
        `WITH updated AS (
           UPDATE negotiations SET initiator = $2, state = $3, live_holds = $4, created_at = $5, updated_at = $6,
              record = $7, hold_expires_at = $8 WHERE id = $1 RETURNING id
         )
         SELECT (SELECT count(*) FROM updated)::int AS updated,
            ARRAY(SELECT offer_id FROM negotiation_offers WHERE negotiation_id = $1) AS stored`,
        values(toRow(negotiation)),
      );
      if (rows[0]?.updated !== 1) throw new Error(`negotiation ${negotiation.id} does not exist`);
      // Documents never change: only those of offers added since the last write are stored, with the COMMIT.
      void tx.withCommit(insertDocuments(offerDocuments(negotiation, new Set(rows[0].stored))));
    });
  }

  async get(id: string): Promise<Negotiation | undefined> {
    const { rows } = await this.connection.query<NegotiationRow>(`SELECT ${columns} FROM negotiations WHERE id = $1`, [
      id,
    ]);
    return rows[0] && fromRow(rows[0], await documentsOf(this.connection, [id]));
  }

  async list(filter: NegotiationFilter = {}): Promise<Negotiation[]> {
    const { where, params, limit } = listingSql(filter, ...holdConditions(filter));
    const sql = numbered(`SELECT ${columns} FROM negotiations ${where} ORDER BY created_at, id${limit}`);
    const { rows } = await this.connection.query<NegotiationRow>(sql, params);
    const documents = new Map<string, OfferDocumentRow[]>();
    for (const document of await documentsOf(
      this.connection,
      rows.map((r) => r.id),
    )) {
      const group = documents.get(document.negotiation_id);
      if (group) group.push(document);
      else documents.set(document.negotiation_id, [document]);
    }
    return rows.map((row) => fromRow(row, documents.get(row.id) ?? []));
  }

  async close(): Promise<void> {
    await this.connection.close();
  }
}

/** The statement storing `documents` (none when there are none), sent with a COMMIT. */
function insertDocuments(documents: OfferDocumentRow[]): string[] {
  if (documents.length === 0) return [];
  return [
    literalInsert(
      'negotiation_offers',
      'negotiation_id, offer_id, document',
      documents.map((d) => [d.negotiation_id, d.offer_id, d.document]),
    ),
  ];
}

/** The offer documents of the negotiations `ids`, in one query. */
async function documentsOf(db: Queryable, ids: string[]): Promise<OfferDocumentRow[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<OfferDocumentRow>(
    'SELECT negotiation_id, offer_id, document FROM negotiation_offers WHERE negotiation_id = ANY($1)',
    [ids],
  );
  return rows;
}

function about(id: string, notes: readonly AuditNote[]) {
  return notes.map((note) => ({ ...note, subject: { kind: 'negotiation', id } as const }));
}
