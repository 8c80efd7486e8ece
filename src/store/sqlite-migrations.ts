/**
 * Schema changes of the wsag database, applied in order; migration i brings the database to
 * version i + 1. Never edit a shipped entry: a database already at that version would never
 * see the change. Append a new one instead.
 */
export const migrations: readonly string[] = [
  // 1: agreements.
  `CREATE TABLE agreements (
     id               TEXT    PRIMARY KEY,
     name             TEXT,
     template_id      TEXT    NOT NULL,
     template_name    TEXT    NOT NULL,
     initiator        TEXT    NOT NULL,
     state            TEXT    NOT NULL,
     service_terms    TEXT    NOT NULL,
     guarantee_terms  TEXT    NOT NULL,
     request          TEXT    NOT NULL,
     allocation_start INTEGER,
     allocation_end   INTEGER,
     allocation_nodes INTEGER,
     document         TEXT    NOT NULL,
     created_at       INTEGER NOT NULL,
     updated_at       INTEGER NOT NULL
   ) STRICT;
   CREATE INDEX agreements_by_creation ON agreements (created_at, id);
   CREATE INDEX agreements_by_initiator ON agreements (initiator, created_at, id);`,

  // 2: the agreement fields negotiation added (price, origin, alternative, usedBy,
  // acceptanceEpr) as one JSON object. Nothing queries them, and NULL (rows written before
  // this migration) reads as "none set".
  `ALTER TABLE agreements ADD COLUMN extras TEXT;`,

  // 3: negotiations. Only what is filtered or ordered on gets a column; the rest of the
  // record (offers and their holds) is one JSON document. live_holds counts offers whose
  // hold is Held, so a restart can rebuild the capacity plan without reading every
  // negotiation; the partial index holds just those rows, already in list order.
  `CREATE TABLE negotiations (
     id         TEXT    PRIMARY KEY,
     initiator  TEXT    NOT NULL,
     state      TEXT    NOT NULL,
     live_holds INTEGER NOT NULL,
     created_at INTEGER NOT NULL,
     updated_at INTEGER NOT NULL,
     record     TEXT    NOT NULL
   ) STRICT;
   CREATE INDEX negotiations_by_creation ON negotiations (created_at, id);
   CREATE INDEX negotiations_by_initiator ON negotiations (initiator, created_at, id);
   CREATE INDEX negotiations_with_live_holds ON negotiations (created_at, id) WHERE live_holds > 0;`,

  // 4: the planning scheduler's plan behind an agreement's allocation (segments with node
  // ids, checkpoint plan, outages left, ...), as one JSON object, so a restart restores the
  // same plan. NULL (rows written before, or no plan) means: place the allocation again.
  `ALTER TABLE agreements ADD COLUMN allocation_plan TEXT;`,

  // 5: the audit trail (AuditLog in src/engine/ports.ts): one row per state change of an
  // agreement or a negotiation, hash-chained by seq. Append-only: the triggers refuse
  // UPDATE and DELETE, so only someone who drops them first can rewrite history, and the
  // chain then shows where.
  `CREATE TABLE audit_log (
     seq          INTEGER PRIMARY KEY,
     at           INTEGER NOT NULL,
     actor        TEXT    NOT NULL,
     subject_kind TEXT    NOT NULL,
     subject_id   TEXT    NOT NULL,
     action       TEXT    NOT NULL,
     details      TEXT    NOT NULL,
     prev_hash    TEXT    NOT NULL,
     hash         TEXT    NOT NULL
   ) STRICT;
   CREATE INDEX audit_log_by_subject ON audit_log (subject_kind, subject_id, seq);
   CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
   BEGIN SELECT RAISE(ABORT, 'audit_log is append-only: its rows cannot be updated'); END;
   CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
   BEGIN SELECT RAISE(ABORT, 'audit_log is append-only: its rows cannot be deleted'); END;`,

  // 6: agreements by state, in list order: a restart reads back only the live ones, and
  // listings filter by state, without reading every agreement ever made.
  `CREATE INDEX agreements_by_state ON agreements (state, created_at, id);`,

  // 7: accounting: accounts with their sums, holds of funds, and the ledger. The
  // ledger's key is unique: an operation applied once is never applied again (a retry
  // after a crash finds its key and stops). Append-only like the audit log.
  `CREATE TABLE accounts (
     id         TEXT    PRIMARY KEY,
     kind       TEXT    NOT NULL,
     owner      TEXT    NOT NULL,
     members    TEXT    NOT NULL,
     currency   TEXT    NOT NULL,
     overdraft  TEXT    NOT NULL,
     vo         TEXT,
     grp        TEXT,
     funds      INTEGER NOT NULL,
     held       INTEGER NOT NULL,
     allocated  INTEGER NOT NULL,
     created_at INTEGER NOT NULL,
     updated_at INTEGER NOT NULL
   ) STRICT;
   CREATE TABLE account_holds (
     id         TEXT    PRIMARY KEY,
     account_id TEXT    NOT NULL REFERENCES accounts (id),
     amount     INTEGER NOT NULL,
     open       INTEGER NOT NULL,
     created_at INTEGER NOT NULL,
     closed_at  INTEGER
   ) STRICT;
   CREATE INDEX account_holds_open ON account_holds (account_id, created_at) WHERE open = 1;
   CREATE TABLE ledger (
     seq         INTEGER PRIMARY KEY,
     account_id  TEXT    NOT NULL REFERENCES accounts (id),
     at          INTEGER NOT NULL,
     kind        TEXT    NOT NULL,
     amount      INTEGER NOT NULL,
     held_change INTEGER NOT NULL,
     hold_id     TEXT,
     key         TEXT    NOT NULL UNIQUE,
     note        TEXT    NOT NULL
   ) STRICT;
   CREATE INDEX ledger_by_account ON ledger (account_id, seq);
   CREATE TRIGGER ledger_no_update BEFORE UPDATE ON ledger
   BEGIN SELECT RAISE(ABORT, 'the ledger is append-only: its rows cannot be updated'); END;
   CREATE TRIGGER ledger_no_delete BEFORE DELETE ON ledger
   BEGIN SELECT RAISE(ABORT, 'the ledger is append-only: its rows cannot be deleted'); END;`,

  // 8: usage records: one GFD.98 record per ended agreement, never changed.
  `CREATE TABLE usage_records (
     agreement_id TEXT    PRIMARY KEY,
     initiator    TEXT    NOT NULL,
     created_at   INTEGER NOT NULL,
     xml          TEXT    NOT NULL,
     signed       TEXT
   ) STRICT;
   CREATE INDEX usage_records_by_creation ON usage_records (created_at, agreement_id);
   CREATE INDEX usage_records_by_initiator ON usage_records (initiator, created_at, agreement_id);`,

  // 9: each offer's document in a row of its own, written once: a negotiation's record
  // (rewritten on every change) no longer carries every document exchanged so far. The
  // documents of stored negotiations move out of their records.
  `CREATE TABLE negotiation_offers (
     negotiation_id TEXT NOT NULL REFERENCES negotiations (id),
     offer_id       TEXT NOT NULL,
     document       TEXT NOT NULL,
     PRIMARY KEY (negotiation_id, offer_id)
   ) STRICT;
   INSERT INTO negotiation_offers (negotiation_id, offer_id, document)
     SELECT n.id, json_extract(o.value, '$.offerId'), json_extract(o.value, '$.document')
     FROM negotiations n, json_each(n.record, '$.offers') o;
   UPDATE negotiations SET record = json_set(record, '$.offers', json((
     SELECT json_group_array(json(json_remove(o.value, '$.document')) ORDER BY o.key)
     FROM json_each(negotiations.record, '$.offers') o
   )));`,

  // 10: when a negotiation's first hold in state Held expires, so the expiry timer reads only
  // the negotiations with a hold due (it read every one with a live hold, each second: with
  // 5,000 held offers 546 ms of CPU a second, docs/benchmarks.md). NULL for rows written
  // before: those are read as due until their next write sets it.
  `ALTER TABLE negotiations ADD COLUMN hold_expires_at INTEGER;`,

  // 11: WS-Security signatures received, each used once (docs/security.md), kept until the message would have expired.
  `CREATE TABLE seen_signatures (
     digest TEXT    PRIMARY KEY,
     until  INTEGER NOT NULL
   ) STRICT;
   CREATE INDEX seen_signatures_by_until ON seen_signatures (until);`,

  // 12: JSON requests sent with an Idempotency-Key (docs/api.md), kept 24 hours.
  `CREATE TABLE idempotency_keys (
     party        TEXT    NOT NULL,
     key          TEXT    NOT NULL,
     fingerprint  TEXT    NOT NULL,
     agreement_id TEXT,
     status       INTEGER,
     body         TEXT,
     created_at   INTEGER NOT NULL,
     PRIMARY KEY (party, key)
   ) STRICT;
   CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_at);`,
];
