/**
 * The PostgreSQL schema, in numbered migrations like the SQLite store's (src/store/sqlite-migrations.ts):
 * migration i brings the database to version i + 1; never edit a shipped entry, append one.
 * The same tables and columns as SQLite, so rows map the same way: times in milliseconds and
 * money in cents as BIGINT, JSON as TEXT (stored exactly as written).
 */
export const pgMigrations: readonly string[] = [
  // 1: everything SQLite reached in its eight migrations.
  `CREATE TABLE agreements (
     id               TEXT   PRIMARY KEY,
     name             TEXT,
     template_id      TEXT   NOT NULL,
     template_name    TEXT   NOT NULL,
     initiator        TEXT   NOT NULL,
     state            TEXT   NOT NULL,
     service_terms    TEXT   NOT NULL,
     guarantee_terms  TEXT   NOT NULL,
     request          TEXT   NOT NULL,
     allocation_start BIGINT,
     allocation_end   BIGINT,
     allocation_nodes BIGINT,
     allocation_plan  TEXT,
     document         TEXT   NOT NULL,
     extras           TEXT,
     created_at       BIGINT NOT NULL,
     updated_at       BIGINT NOT NULL
   );
   CREATE INDEX agreements_by_creation ON agreements (created_at, id);
   CREATE INDEX agreements_by_initiator ON agreements (initiator, created_at, id);
   CREATE INDEX agreements_by_state ON agreements (state, created_at, id);

   CREATE TABLE negotiations (
     id         TEXT   PRIMARY KEY,
     initiator  TEXT   NOT NULL,
     state      TEXT   NOT NULL,
     live_holds BIGINT NOT NULL,
     created_at BIGINT NOT NULL,
     updated_at BIGINT NOT NULL,
     record     TEXT   NOT NULL
   );
   CREATE INDEX negotiations_by_creation ON negotiations (created_at, id);
   CREATE INDEX negotiations_by_initiator ON negotiations (initiator, created_at, id);
   CREATE INDEX negotiations_with_live_holds ON negotiations (created_at, id) WHERE live_holds > 0;

   CREATE TABLE audit_log (
     seq          BIGINT PRIMARY KEY,
     at           BIGINT NOT NULL,
     actor        TEXT   NOT NULL,
     subject_kind TEXT   NOT NULL,
     subject_id   TEXT   NOT NULL,
     action       TEXT   NOT NULL,
     details      TEXT   NOT NULL,
     prev_hash    TEXT   NOT NULL,
     hash         TEXT   NOT NULL
   );
   CREATE INDEX audit_log_by_subject ON audit_log (subject_kind, subject_id, seq);
   CREATE FUNCTION append_only() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN RAISE EXCEPTION '% is append-only: its rows cannot be %d', TG_TABLE_NAME, lower(TG_OP); END $$;
   CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log
      FOR EACH ROW EXECUTE FUNCTION append_only();

   CREATE TABLE accounts (
     id         TEXT   PRIMARY KEY,
     kind       TEXT   NOT NULL,
     owner      TEXT   NOT NULL,
     members    TEXT   NOT NULL,
     currency   TEXT   NOT NULL,
     overdraft  TEXT   NOT NULL,
     vo         TEXT,
     grp        TEXT,
     funds      BIGINT NOT NULL,
     held       BIGINT NOT NULL,
     allocated  BIGINT NOT NULL,
     created_at BIGINT NOT NULL,
     updated_at BIGINT NOT NULL
   );
   CREATE TABLE account_holds (
     id         TEXT   PRIMARY KEY,
     account_id TEXT   NOT NULL REFERENCES accounts (id),
     amount     BIGINT NOT NULL,
     open       BIGINT NOT NULL,
     created_at BIGINT NOT NULL,
     closed_at  BIGINT
   );
   CREATE INDEX account_holds_open ON account_holds (account_id, created_at) WHERE open = 1;
   CREATE TABLE ledger (
     seq         BIGSERIAL PRIMARY KEY,
     account_id  TEXT   NOT NULL REFERENCES accounts (id),
     at          BIGINT NOT NULL,
     kind        TEXT   NOT NULL,
     amount      BIGINT NOT NULL,
     held_change BIGINT NOT NULL,
     hold_id     TEXT,
     key         TEXT   NOT NULL UNIQUE,
     note        TEXT   NOT NULL
   );
   CREATE INDEX ledger_by_account ON ledger (account_id, seq);
   CREATE TRIGGER ledger_append_only BEFORE UPDATE OR DELETE ON ledger FOR EACH ROW EXECUTE FUNCTION append_only();

   CREATE TABLE usage_records (
     agreement_id TEXT   PRIMARY KEY,
     initiator    TEXT   NOT NULL,
     created_at   BIGINT NOT NULL,
     xml          TEXT   NOT NULL,
     signed       TEXT
   );
   CREATE INDEX usage_records_by_creation ON usage_records (created_at, agreement_id);
   CREATE INDEX usage_records_by_initiator ON usage_records (initiator, created_at, agreement_id);`,
  // 2: the planning leader of instances sharing the database (docs/deployment.md), where the others forward to.
  `CREATE TABLE cluster_leader (
     singleton BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (singleton),
     instance  TEXT   NOT NULL,
     url       TEXT   NOT NULL,
     term      BIGINT NOT NULL,
     since     BIGINT NOT NULL
   );`,

  // 3: each offer's document in a row of its own, written once (SQLite migration 9).
  `CREATE TABLE negotiation_offers (
     negotiation_id TEXT NOT NULL REFERENCES negotiations (id),
     offer_id       TEXT NOT NULL,
     document       TEXT NOT NULL,
     PRIMARY KEY (negotiation_id, offer_id)
   );
   INSERT INTO negotiation_offers (negotiation_id, offer_id, document)
     SELECT n.id, o.value->>'offerId', o.value->>'document'
     FROM negotiations n, jsonb_array_elements(n.record::jsonb->'offers') o;
   UPDATE negotiations SET record = jsonb_set(record::jsonb, '{offers}', coalesce((
     SELECT jsonb_agg(o.value - 'document' ORDER BY o.position)
     FROM jsonb_array_elements(negotiations.record::jsonb->'offers') WITH ORDINALITY o(value, position)
   ), '[]'::jsonb))::text;`,

  // 4: when a negotiation's first hold in state Held expires (SQLite migration 10).
  `ALTER TABLE negotiations ADD COLUMN hold_expires_at BIGINT;`,

  // 5: WS-Security signatures received, each used once (SQLite migration 11).
  `CREATE TABLE seen_signatures (
     digest   TEXT   PRIMARY KEY,
     until_ms BIGINT NOT NULL
   );
   CREATE INDEX seen_signatures_by_until ON seen_signatures (until_ms);`,

  // 6: the leader's heartbeat, and the leader before it with its last heartbeat (the last takeover's gap).
  `ALTER TABLE cluster_leader ADD COLUMN alive BIGINT, ADD COLUMN previous_instance TEXT,
     ADD COLUMN previous_alive BIGINT;`,

  // 7: JSON requests sent with an Idempotency-Key (SQLite migration 12).
  `CREATE TABLE idempotency_keys (
     party        TEXT    NOT NULL,
     key          TEXT    NOT NULL,
     fingerprint  TEXT    NOT NULL,
     agreement_id TEXT,
     status       INTEGER,
     body         TEXT,
     created_ms   BIGINT  NOT NULL,
     PRIMARY KEY (party, key)
   );
   CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_ms);`,
];
