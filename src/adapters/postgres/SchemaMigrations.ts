import { Effect } from "effect"
import { Migrator, SqlClient } from "effect/sql"
import { searchKey } from "../../domain/pets/PetSearch.ts"
import { PET_TAG_PATTERN, PET_TAGS_MAX } from "../../domain/pets/PetTag.ts"

/** Table that records which migrations have run. */
export const MIGRATIONS_TABLE = "animal_store_migrations"

/**
 * The schema of the whole store (pets, orders, API keys, webhooks), versioned. Never edit a migration
 * that has shipped: add the next one. The CHECK constraints mirror the domain's rules so
 * that no other writer can store a pet or an order the service would refuse.
 */
export const loader = Migrator.fromRecord({
  "0001_create_pets": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`
      CREATE TABLE pets (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        name text NOT NULL
          CONSTRAINT pets_name_length CHECK (char_length(name) BETWEEN 1 AND 255)
          CONSTRAINT pets_name_not_blank CHECK (name ~ '[^[:space:]]')
          CONSTRAINT pets_name_no_controls CHECK (name !~ '[\u0001-\u001f]'),
        category_id bigint NOT NULL,
        status text CONSTRAINT pets_status_enum CHECK (status IN ('available', 'pending', 'sold')),
        created_at timestamptz NOT NULL DEFAULT now()
      )
    `
    // Keyset pages filtered by status walk (status, id); unfiltered pages walk the primary key.
    yield* sql`CREATE INDEX pets_status_id ON pets (status, id)`
  }),
  // `[[:space:]]` depends on the database's locale and build (PGlite counts U+0085 as
  // space, a PostgreSQL server does not), so "not blank" names the domain's class
  // (PetName.BLANK_CHARACTER_CLASS) character by character. Every stored name already
  // passed the domain's rule, so no row fails the new check.
  "0002_name_blank_class": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`
      ALTER TABLE pets
        DROP CONSTRAINT pets_name_not_blank,
        ADD CONSTRAINT pets_name_not_blank
          CHECK (name ~ '[^\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff]')
    `
  }),
  // Orders, beside the pets they are for. The partial unique index is the database's
  // own guard for the rule the adapter keeps through the pet's status: at most one open
  // order per pet, whatever writes to the table.
  "0003_create_orders": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`
      CREATE TABLE orders (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        pet_id bigint NOT NULL CONSTRAINT orders_pet_id_fkey REFERENCES pets (id),
        quantity integer NOT NULL CONSTRAINT orders_quantity_one CHECK (quantity = 1),
        status text NOT NULL
          CONSTRAINT orders_status_enum CHECK (status IN ('placed', 'approved', 'delivered', 'cancelled')),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )
    `
    yield* sql`CREATE UNIQUE INDEX orders_one_open_per_pet ON orders (pet_id) WHERE status IN ('placed', 'approved')`
    // Keyset pages by status walk (status, id), by pet (pet_id, id); the latter also serves the foreign key.
    yield* sql`CREATE INDEX orders_status_id ON orders (status, id)`
    yield* sql`CREATE INDEX orders_pet_id_id ON orders (pet_id, id)`
  }),
  // Managed API keys: only a SHA-256 digest of each key is kept, never the key.
  "0004_create_api_keys": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`
      CREATE TABLE api_keys (
        id text PRIMARY KEY CONSTRAINT api_keys_id_format CHECK (id ~ '^[0-9a-f]{12}$'),
        name text NOT NULL CONSTRAINT api_keys_name_length CHECK (char_length(name) BETWEEN 1 AND 100),
        scope text NOT NULL CONSTRAINT api_keys_scope_enum CHECK (scope IN ('read', 'write')),
        digest text NOT NULL UNIQUE CONSTRAINT api_keys_digest_format CHECK (digest ~ '^[0-9a-f]{64}$'),
        created_at timestamptz NOT NULL,
        expires_at timestamptz,
        last_used_at timestamptz,
        revoked_at timestamptz
      )
    `
  }),
  // The answers of creates sent with an Idempotency-Key, per API key (key_id) and key,
  // written in the create's own transaction. Only 2xx and 4xx answers are kept; rows older
  // than the retention window are ignored, then deleted (created_at index). The key
  // format is IdempotencyKey's: 1–255 visible ASCII characters.
  "0005_create_idempotency_keys": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`
      CREATE TABLE idempotency_keys (
        key_id text NOT NULL,
        idempotency_key text NOT NULL
          CONSTRAINT idempotency_keys_key_format
            CHECK (idempotency_key ~ '^[!-~]{1,255}$'),
        fingerprint text NOT NULL,
        status integer NOT NULL CONSTRAINT idempotency_keys_status_kept CHECK (status BETWEEN 200 AND 499),
        body text NOT NULL,
        location text,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (key_id, idempotency_key)
      )
    `
    yield* sql`CREATE INDEX idempotency_keys_created_at ON idempotency_keys (created_at)`
  }),
  // The inventory, kept by triggers in the transaction of every change to `pets`, so that
  // reading it sums 16 rows whatever the size of the table (it was a count(*) over it).
  // - One counter row would make every create wait for the commit of the one before it:
  //   40 connections inserting pets managed 275–303 a second with one row, against
  //   1,164–1,222 with no counts and 1,048–1,155 with these 16 rows (2 runs of 5 s each).
  // - A change counts in the row of its connection (backend pid modulo 16), so concurrent
  //   connections mostly write different rows, and a transaction locks one counter row
  //   however many pets it changes: writers cannot deadlock on them. A row's counts may go
  //   below zero (a pet created on one connection, sold on another); the sums are right.
  // - Per statement, not per row: a row trigger rewrote the same counter row once per
  //   pet, and each rewrite walked the versions its own transaction had left, so one
  //   INSERT ... SELECT of 20,000 pets took 19 s (0.47 s this way, 0.24 s with no counts).
  // - TRUNCATE skips the others, so it has its own.
  // The lock keeps writers out between the count of the pets already there and the
  // triggers taking over; they resume after the commit, and fire the triggers.
  "0006_count_pets_by_status": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`LOCK TABLE pets IN SHARE ROW EXCLUSIVE MODE`
    yield* sql`
      CREATE TABLE pet_counts (
        slot integer PRIMARY KEY CONSTRAINT pet_counts_slot_range CHECK (slot BETWEEN 0 AND 15),
        available bigint NOT NULL,
        pending bigint NOT NULL,
        sold bigint NOT NULL,
        none bigint NOT NULL
      )
    `
    yield* sql`
      INSERT INTO pet_counts (slot, available, pending, sold, none)
      SELECT 0,
             count(*) FILTER (WHERE status = 'available'),
             count(*) FILTER (WHERE status = 'pending'),
             count(*) FILTER (WHERE status = 'sold'),
             count(*) FILTER (WHERE status IS NULL)
      FROM pets
      UNION ALL
      SELECT slot, 0, 0, 0, 0 FROM generate_series(1, 15) AS slot
    `
    yield* sql`
      CREATE FUNCTION pet_counts_add(available_change bigint, pending_change bigint, sold_change bigint, none_change bigint)
      RETURNS void LANGUAGE sql AS $$
        UPDATE pet_counts SET
          available = available + available_change, pending = pending + pending_change,
          sold = sold + sold_change, none = none + none_change
        WHERE slot = pg_backend_pid() % 16
      $$
    `
    // The new rows count in, the old ones out: an update of a pet's status does both.
    yield* sql`
      CREATE FUNCTION pet_counts_follow() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP <> 'DELETE' THEN
          PERFORM pet_counts_add(count(*) FILTER (WHERE status = 'available'), count(*) FILTER (WHERE status = 'pending'),
                                 count(*) FILTER (WHERE status = 'sold'), count(*) FILTER (WHERE status IS NULL))
          FROM added;
        END IF;
        IF TG_OP <> 'INSERT' THEN
          PERFORM pet_counts_add(-count(*) FILTER (WHERE status = 'available'), -count(*) FILTER (WHERE status = 'pending'),
                                 -count(*) FILTER (WHERE status = 'sold'), -count(*) FILTER (WHERE status IS NULL))
          FROM removed;
        END IF;
        RETURN NULL;
      END
      $$
    `
    yield* sql`
      CREATE TRIGGER pet_counts_insert AFTER INSERT ON pets REFERENCING NEW TABLE AS added
      FOR EACH STATEMENT EXECUTE FUNCTION pet_counts_follow()
    `
    yield* sql`
      CREATE TRIGGER pet_counts_update AFTER UPDATE ON pets REFERENCING OLD TABLE AS removed NEW TABLE AS added
      FOR EACH STATEMENT EXECUTE FUNCTION pet_counts_follow()
    `
    yield* sql`
      CREATE TRIGGER pet_counts_delete AFTER DELETE ON pets REFERENCING OLD TABLE AS removed
      FOR EACH STATEMENT EXECUTE FUNCTION pet_counts_follow()
    `
    yield* sql`
      CREATE FUNCTION pet_counts_clear() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE pet_counts SET available = 0, pending = 0, sold = 0, none = 0;
        RETURN NULL;
      END
      $$
    `
    yield* sql`
      CREATE TRIGGER pet_counts_clear AFTER TRUNCATE ON pets
      FOR EACH STATEMENT EXECUTE FUNCTION pet_counts_clear()
    `
  }),
  // A pet can be ordered and cancelled without end, so a page of one pet's orders in one
  // status walked (pet_id, id) over its whole history; (pet_id, status, id) reads the page.
  "0007_orders_by_pet_and_status": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE INDEX orders_pet_id_status_id ON orders (pet_id, status, id)`
  }),
  // A statement that changes no pet's status must not write a count. An UPDATE whose
  // claim lost (READ COMMITTED keeps the pet's row locked after the failed re-check)
  // then took its count slot while holding the pet, and a transaction holding that slot
  // and waiting for the pet deadlocked with it. Now a slot is only written by a
  // statement that changed a status, and always as its last lock.
  "0008_count_only_status_changes": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`
      CREATE OR REPLACE FUNCTION pet_counts_follow() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        available_change bigint := 0;
        pending_change bigint := 0;
        sold_change bigint := 0;
        none_change bigint := 0;
      BEGIN
        IF TG_OP <> 'DELETE' THEN
          SELECT count(*) FILTER (WHERE status = 'available'), count(*) FILTER (WHERE status = 'pending'),
                 count(*) FILTER (WHERE status = 'sold'), count(*) FILTER (WHERE status IS NULL)
          INTO available_change, pending_change, sold_change, none_change
          FROM added;
        END IF;
        IF TG_OP <> 'INSERT' THEN
          SELECT available_change - count(*) FILTER (WHERE status = 'available'),
                 pending_change - count(*) FILTER (WHERE status = 'pending'),
                 sold_change - count(*) FILTER (WHERE status = 'sold'),
                 none_change - count(*) FILTER (WHERE status IS NULL)
          INTO available_change, pending_change, sold_change, none_change
          FROM removed;
        END IF;
        IF available_change <> 0 OR pending_change <> 0 OR sold_change <> 0 OR none_change <> 0 THEN
          PERFORM pet_counts_add(available_change, pending_change, sold_change, none_change);
        END IF;
        RETURN NULL;
      END
      $$
    `
  }),
  // Pets are edited and retired (issue 23). `version` counts every write of a pet (the
  // HTTP ETag); a retired pet keeps its row, for the orders that name it, with
  // `deleted_at` set. The counts follow only pets that are not retired: a retirement
  // counts as the pet leaving its status. The adapters bump `version` in each statement
  // that writes a pet. A kept create answer keeps its ETag too. ADD COLUMN with a
  // constant default rewrites no row.
  "0009_edit_and_retire_pets": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`
      ALTER TABLE pets
        ADD COLUMN version integer NOT NULL DEFAULT 1 CONSTRAINT pets_version_positive CHECK (version >= 1),
        ADD COLUMN deleted_at timestamptz
    `
    yield* sql`ALTER TABLE idempotency_keys ADD COLUMN etag text`
    yield* sql`
      CREATE OR REPLACE FUNCTION pet_counts_follow() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        available_change bigint := 0;
        pending_change bigint := 0;
        sold_change bigint := 0;
        none_change bigint := 0;
      BEGIN
        IF TG_OP <> 'DELETE' THEN
          SELECT count(*) FILTER (WHERE status = 'available'), count(*) FILTER (WHERE status = 'pending'),
                 count(*) FILTER (WHERE status = 'sold'), count(*) FILTER (WHERE status IS NULL)
          INTO available_change, pending_change, sold_change, none_change
          FROM added WHERE deleted_at IS NULL;
        END IF;
        IF TG_OP <> 'INSERT' THEN
          SELECT available_change - count(*) FILTER (WHERE status = 'available'),
                 pending_change - count(*) FILTER (WHERE status = 'pending'),
                 sold_change - count(*) FILTER (WHERE status = 'sold'),
                 none_change - count(*) FILTER (WHERE status IS NULL)
          INTO available_change, pending_change, sold_change, none_change
          FROM removed WHERE deleted_at IS NULL;
        END IF;
        IF available_change <> 0 OR pending_change <> 0 OR sold_change <> 0 OR none_change <> 0 THEN
          PERFORM pet_counts_add(available_change, pending_change, sold_change, none_change);
        END IF;
        RETURN NULL;
      END
      $$
    `
  }),
  // The outbox: every change writes its event in its own transaction (EventAppend). `data`
  // is the resource's API JSON as text (json keeps it verbatim: every int64 digit).
  //
  // Ids become visible in commit order: a row is inserted under a provisional negative id,
  // and a deferred constraint trigger, run inside COMMIT itself, takes a lock that every
  // commit of an event shares and only then gives the row its id. The lock is held from
  // there to the end of the commit, server-side, with no round trip to a client in
  // between: a reader that has seen event n never meets one below n committed later. The
  // swept watermark tells a reader whose cursor predates retention that it missed events.
  // Migration 0014 replaced this numbering at COMMIT, which serialized every writer's
  // commit, by a sequencer that numbers committed events after the fact (EventSequencer).
  "0010_create_events": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE SEQUENCE events_provisional_id`
    yield* sql`
      CREATE TABLE events (
        id bigint PRIMARY KEY DEFAULT -nextval('events_provisional_id'),
        type text NOT NULL CONSTRAINT events_type_enum CHECK (type IN (
          'pet.created', 'pet.updated', 'pet.deleted',
          'order.placed', 'order.approved', 'order.delivered', 'order.cancelled'
        )),
        occurred_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        data json NOT NULL
      )
    `
    yield* sql`CREATE SEQUENCE events_id OWNED BY events.id`
    yield* sql`ALTER SEQUENCE events_provisional_id OWNED BY events.id`
    // 0x6576 ("ev"), 1 in the two-int4 key space of advisory locks, which no
    // hashtextextended lock (IdempotentCreatesSql) can collide with.
    yield* sql`
      CREATE FUNCTION events_number_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_advisory_xact_lock(25974, 1);
        UPDATE events SET id = nextval('events_id'), occurred_at = clock_timestamp() WHERE id = NEW.id;
        RETURN NULL;
      END
      $$
    `
    yield* sql`
      CREATE CONSTRAINT TRIGGER events_number_at_commit AFTER INSERT ON events
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION events_number_at_commit()
    `
    // Feed pages of one type walk (type, id); retention walks occurred_at.
    yield* sql`CREATE INDEX events_type_id ON events (type, id)`
    yield* sql`CREATE INDEX events_occurred_at ON events (occurred_at)`
    yield* sql`
      CREATE TABLE events_swept (
        only_row boolean PRIMARY KEY DEFAULT true CONSTRAINT events_swept_one_row CHECK (only_row),
        through bigint NOT NULL
      )
    `
    yield* sql`INSERT INTO events_swept (through) VALUES (0)`
  }),
  // Webhook subscriptions, their signing secrets (kept: each delivery is signed with them;
  // a rotation keeps the previous one until its overlap ends), where each one's deliveries
  // stand, and the attempts made. Numbered 0011: 0009 and 0010 belong to other parts of the same release.
  "0011_create_webhooks": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`
      CREATE TABLE webhooks (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        url text NOT NULL CONSTRAINT webhooks_url_length CHECK (char_length(url) BETWEEN 1 AND 2048),
        types text[] NOT NULL CONSTRAINT webhooks_types_not_empty CHECK (cardinality(types) > 0),
        created_at timestamptz NOT NULL,
        disabled_at timestamptz,
        disabled_reason text CONSTRAINT webhooks_disabled_reason_length CHECK (char_length(disabled_reason) <= 500),
        secret text NOT NULL CONSTRAINT webhooks_secret_format CHECK (secret ~ '^whsec_'),
        previous_secret text CONSTRAINT webhooks_previous_secret_format CHECK (previous_secret ~ '^whsec_'),
        previous_secret_until timestamptz,
        cursor_event_id bigint NOT NULL DEFAULT 0,
        attempt integer NOT NULL DEFAULT 0 CONSTRAINT webhooks_attempt_not_negative CHECK (attempt >= 0),
        next_attempt_at timestamptz,
        CONSTRAINT webhooks_disabled_with_reason CHECK ((disabled_at IS NULL) = (disabled_reason IS NULL)),
        CONSTRAINT webhooks_previous_secret_until CHECK ((previous_secret IS NULL) = (previous_secret_until IS NULL))
      )
    `
    yield* sql`
      CREATE TABLE webhook_deliveries (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        webhook_id bigint NOT NULL CONSTRAINT webhook_deliveries_webhook_id_fkey REFERENCES webhooks (id) ON DELETE CASCADE,
        event_id bigint NOT NULL,
        attempt integer NOT NULL CONSTRAINT webhook_deliveries_attempt_positive CHECK (attempt >= 1),
        attempted_at timestamptz NOT NULL,
        outcome text NOT NULL CONSTRAINT webhook_deliveries_outcome_enum CHECK (outcome IN ('delivered', 'gone', 'retry')),
        http_status integer,
        duration_ms integer NOT NULL CONSTRAINT webhook_deliveries_duration_not_negative CHECK (duration_ms >= 0),
        error text CONSTRAINT webhook_deliveries_error_length CHECK (char_length(error) <= 500)
      )
    `
    // A subscription's attempts are read as keyset pages of (webhook_id, id); the index also serves the cascade.
    yield* sql`CREATE INDEX webhook_deliveries_webhook_id_id ON webhook_deliveries (webhook_id, id)`
  }),
  // Delivery shared by the instances on one database: an instance leases the subscriptions
  // it delivers to (claimed with FOR UPDATE SKIP LOCKED, no transaction held across the
  // HTTP call); a lease left by a killed instance expires and another one takes over.
  // first_attempt_at dates the first attempt at the pending event: the 24 h retry window.
  "0012_webhook_leases": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`
      ALTER TABLE webhooks
        ADD COLUMN first_attempt_at timestamptz,
        ADD COLUMN lease_owner text CONSTRAINT webhooks_lease_owner_length CHECK (char_length(lease_owner) <= 200),
        ADD COLUMN lease_until timestamptz,
        ADD CONSTRAINT webhooks_lease_whole CHECK ((lease_owner IS NULL) = (lease_until IS NULL))
    `
  }),
  // The W3C traceparent of the span that recorded each event, when spans were exported:
  // a webhook delivery's span links to the trace of the request that made the change.
  // Nullable, with no default and no check, so adding it neither rewrites nor scans the
  // table; a value the dispatcher cannot parse only means no link.
  "0013_event_trace_parent": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`ALTER TABLE events ADD COLUMN trace_parent text`
  }),
  // Events are numbered after their commit, not inside it (EventSequencer explains why
  // ids still become visible in order): 0010's trigger held one lock through every
  // writer's commit, its WAL flush included, so changes that make events committed one
  // at a time. Writers now insert the row alone; events_sequence numbers every committed
  // unnumbered row in one statement of its own transaction, under the lock only
  // sequencers take. The partial index finds those rows (cheaply when there are none).
  "0014_sequence_events": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`DROP TRIGGER events_number_at_commit ON events`
    yield* sql`DROP FUNCTION events_number_at_commit()`
    yield* sql`CREATE INDEX events_unnumbered ON events (id) WHERE id < 0`
    // Provisional ids are -nextval: descending provisional order is insertion order, and
    // an ordered scan draws the numbers in scan order. The lock is taken only when there
    // is something to number, and each statement of a plpgsql function takes a new
    // snapshot, so the UPDATE sees what the previous holder committed.
    yield* sql`
      CREATE FUNCTION events_sequence(channel text) RETURNS bigint LANGUAGE plpgsql AS $$
      DECLARE
        numbered bigint;
      BEGIN
        IF NOT EXISTS (SELECT 1 FROM events WHERE id < 0) THEN
          RETURN 0;
        END IF;
        PERFORM pg_advisory_xact_lock(25974, 1);
        WITH numbering AS MATERIALIZED (
          SELECT id AS provisional, nextval('events_id') AS number FROM events WHERE id < 0 ORDER BY id DESC
        )
        UPDATE events SET id = numbering.number FROM numbering WHERE events.id = numbering.provisional;
        GET DIAGNOSTICS numbered = ROW_COUNT;
        IF numbered > 0 THEN
          PERFORM pg_notify(channel, '');
        END IF;
        RETURN numbered;
      END
      $$
    `
  }),
  // Writers append to a table without indexes; the sequencer moves its rows into `events`
  // with their numbers. Under 0014 each event was written twice in `events` (the insert
  // with four index entries, then the numbering UPDATE, which changes the primary key:
  // a new row version and three more entries); now the writer's transaction adds one
  // heap row and nothing else. `seq` is drawn from the provisional sequence, so a row an
  // instance of the previous release inserts into `events` under -nextval during a
  // rolling upgrade keeps its place: the function moves such rows too.
  "0015_events_pending": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`
      CREATE TABLE events_pending (
        seq bigint NOT NULL DEFAULT nextval('events_provisional_id'),
        type text NOT NULL CONSTRAINT events_pending_type_enum CHECK (type IN (
          'pet.created', 'pet.updated', 'pet.deleted',
          'order.placed', 'order.approved', 'order.delivered', 'order.cancelled'
        )),
        occurred_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        data json NOT NULL,
        trace_parent text
      )
    `
    // Each statement of a plpgsql function takes a new snapshot: the moves see what the
    // previous holder of the lock committed. Numbers are drawn over the rows sorted by
    // seq (a materialized CTE keeps that order), that is in insertion order.
    yield* sql`
      CREATE OR REPLACE FUNCTION events_sequence(channel text) RETURNS bigint LANGUAGE plpgsql AS $$
      DECLARE
        numbered bigint;
      BEGIN
        IF NOT EXISTS (SELECT 1 FROM events_pending) AND NOT EXISTS (SELECT 1 FROM events WHERE id < 0) THEN
          RETURN 0;
        END IF;
        PERFORM pg_advisory_xact_lock(25974, 1);
        WITH legacy AS (
          DELETE FROM events WHERE id < 0 RETURNING id, type, occurred_at, data, trace_parent
        )
        INSERT INTO events_pending (seq, type, occurred_at, data, trace_parent)
        SELECT -id, type, occurred_at, data, trace_parent FROM legacy;
        WITH moved AS (
          DELETE FROM events_pending RETURNING seq, type, occurred_at, data, trace_parent
        ), ordered AS MATERIALIZED (
          SELECT * FROM moved ORDER BY seq
        )
        INSERT INTO events (id, type, occurred_at, data, trace_parent)
        SELECT nextval('events_id'), type, occurred_at, data, trace_parent FROM ordered;
        GET DIAGNOSTICS numbered = ROW_COUNT;
        IF numbered > 0 THEN
          PERFORM pg_notify(channel, '');
        END IF;
        RETURN numbered;
      END
      $$
    `
  }),
  // 0015's test for rows of the previous release, NOT EXISTS (... WHERE id < 0), was
  // planned as a scan of all of `events` where the table had no statistics (PGlite until
  // its first maintenance pass, a server before autovacuum's first analyze): the planner
  // guessed a third of the rows match, so the first one would come early. None do, so
  // each run with nothing pending, every second on an idle instance, read the whole table
  // (1.4 ms a run at 9,000 events on PGlite, growing with retention). min(id) is one
  // index entry whatever the statistics say.
  "0016_events_sequence_by_index": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`
      CREATE OR REPLACE FUNCTION events_sequence(channel text) RETURNS bigint LANGUAGE plpgsql AS $$
      DECLARE
        numbered bigint;
      BEGIN
        IF NOT EXISTS (SELECT 1 FROM events_pending) AND coalesce((SELECT min(id) FROM events), 0) >= 0 THEN
          RETURN 0;
        END IF;
        PERFORM pg_advisory_xact_lock(25974, 1);
        WITH legacy AS (
          DELETE FROM events WHERE id < 0 RETURNING id, type, occurred_at, data, trace_parent
        )
        INSERT INTO events_pending (seq, type, occurred_at, data, trace_parent)
        SELECT -id, type, occurred_at, data, trace_parent FROM legacy;
        WITH moved AS (
          DELETE FROM events_pending RETURNING seq, type, occurred_at, data, trace_parent
        ), ordered AS MATERIALIZED (
          SELECT * FROM moved ORDER BY seq
        )
        INSERT INTO events (id, type, occurred_at, data, trace_parent)
        SELECT nextval('events_id'), type, occurred_at, data, trace_parent FROM ordered;
        GET DIAGNOSTICS numbered = ROW_COUNT;
        IF numbered > 0 THEN
          PERFORM pg_notify(channel, '');
        END IF;
        RETURN numbered;
      END
      $$
    `
  }),
  // Delivery attempts are removed with the events, by retention (EVENTS_RETENTION): the
  // oldest first, a bounded batch per statement. The index lets each statement read only
  // the rows it removes, instead of the whole table to find the old ones.
  "0017_webhook_deliveries_by_time": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE INDEX webhook_deliveries_attempted_at ON webhook_deliveries (attempted_at)`
  }),
  // What retention removed of each type (the latest id per type), beside the watermark of
  // all: a subscription behind it has lost events of its types, and a dispatcher records
  // them as given up. A given-up event is recorded with the outcome `given_up`, with the
  // tries made, none when retention removed it before its first.
  "0018_events_swept_by_type": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`ALTER TABLE events_swept ADD COLUMN through_by_type jsonb NOT NULL DEFAULT '{}'::jsonb`
    yield* sql`
      ALTER TABLE webhook_deliveries
        DROP CONSTRAINT webhook_deliveries_outcome_enum,
        ADD CONSTRAINT webhook_deliveries_outcome_enum CHECK (outcome IN ('delivered', 'gone', 'retry', 'given_up')),
        DROP CONSTRAINT webhook_deliveries_attempt_positive,
        ADD CONSTRAINT webhook_deliveries_attempt_not_negative CHECK (attempt >= 0)
    `
  }),
  // Pets' photos: their records, and their bytes in `photo_blobs` (the default PhotoStore),
  // written first and swept when no record names them (see PhotoStore), and the secret
  // that signs their URLs when the operator configures none. The event types
  // grow by the two photo events; NOT VALID, as the rows already there are of the old
  // types by construction, so the change does not scan the log.
  "0019_create_photos": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const types = sql.literal(`'pet.created', 'pet.updated', 'pet.deleted', 'pet.photo_added', 'pet.photo_removed',
      'order.placed', 'order.approved', 'order.delivered', 'order.cancelled'`)
    yield* sql`
      ALTER TABLE events
        DROP CONSTRAINT events_type_enum,
        ADD CONSTRAINT events_type_enum CHECK (type IN (${types})) NOT VALID
    `
    yield* sql`
      ALTER TABLE events_pending
        DROP CONSTRAINT events_pending_type_enum,
        ADD CONSTRAINT events_pending_type_enum CHECK (type IN (${types})) NOT VALID
    `
    yield* sql`
      CREATE TABLE photos (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        pet_id bigint NOT NULL CONSTRAINT photos_pet_id_fkey REFERENCES pets (id),
        content_type text NOT NULL CONSTRAINT photos_content_type_enum
          CHECK (content_type IN ('image/jpeg', 'image/png', 'image/webp')),
        width integer NOT NULL CONSTRAINT photos_width_positive CHECK (width > 0),
        height integer NOT NULL CONSTRAINT photos_height_positive CHECK (height > 0),
        bytes integer NOT NULL CONSTRAINT photos_bytes_positive CHECK (bytes > 0),
        storage_key text NOT NULL CONSTRAINT photos_storage_key_unique UNIQUE,
        renditions jsonb NOT NULL,
        created_at timestamptz NOT NULL
      )
    `
    // A pet's photos are read, counted and listed in upload order by (pet_id, id).
    yield* sql`CREATE INDEX photos_pet_id_id ON photos (pet_id, id)`
    yield* sql`
      CREATE TABLE photo_blobs (
        key text PRIMARY KEY,
        bytes bytea NOT NULL,
        written_at timestamptz NOT NULL DEFAULT clock_timestamp()
      )
    `
    // The orphan sweep reads the oldest first.
    yield* sql`CREATE INDEX photo_blobs_written_at ON photo_blobs (written_at)`
    // The photo URLs' signing secret when the operator sets none: one row, made on first use.
    yield* sql`
      CREATE TABLE photo_url_secret (
        one boolean PRIMARY KEY DEFAULT true CONSTRAINT photo_url_secret_one_row CHECK (one),
        secret text NOT NULL CONSTRAINT photo_url_secret_length CHECK (char_length(secret) >= 32)
      )
    `
  }),
  // Tags and search on pets.
  // - `pets.tags` is what a pet answer reads; `pet_tags` (tag, pet_id), one row per tag of
  //   each pet not retired, serves `?tag=` as a keyset walk of one tag's pets, so a page
  //   costs the same for a common tag as for a rare one; `tag_counts` serves the tags in
  //   use without a scan. Both follow `pets` by triggers in each change's transaction, so
  //   a create stays one statement. Row triggers with a WHEN: a change that leaves the
  //   tags and the retirement alone (a status an order sets) runs no function at all.
  // - The counts are slotted like pet_counts (0006): one row per tag would make every
  //   create of a popular tag wait for the commit of the one before it.
  // - Tags sort by code point (COLLATE "C"), as the memory store sorts them.
  // - `name_key` is the name through the domain's searchKey, written by the adapter (the
  //   database has no function that normalizes exactly as JavaScript does), filled here
  //   for the pets already stored; a pg_trgm GIN index on it serves `?q=` as LIKE
  //   '%text%'. PGlite loads pg_trgm as an extension (PgliteSettings). It stays
  //   nullable: another writer (or an older release during an upgrade) may insert pets
  //   without it; such a pet is found by no search until the service next writes it.
  // The lock keeps writers out while the existing names are keyed and until the triggers
  // are in place.
  "0020_pet_tags_and_search": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE EXTENSION IF NOT EXISTS pg_trgm`
    yield* sql`LOCK TABLE pets IN SHARE ROW EXCLUSIVE MODE`
    yield* sql`
      CREATE FUNCTION pet_tags_valid(tags text[]) RETURNS boolean LANGUAGE sql IMMUTABLE AS $$
        SELECT cardinality(tags) <= ${sql.literal(String(PET_TAGS_MAX))}
           AND (SELECT count(*) = count(DISTINCT tag) AND bool_and(tag ~ '${sql.literal(PET_TAG_PATTERN)}') IS NOT FALSE
                FROM unnest(tags) AS tag)
           AND array_position(tags, NULL) IS NULL
           AND coalesce(array_ndims(tags), 1) = 1
      $$
    `
    yield* sql`
      ALTER TABLE pets
        ADD COLUMN tags text[] NOT NULL DEFAULT '{}' CONSTRAINT pets_tags_valid CHECK (pet_tags_valid(tags)),
        ADD COLUMN name_key text
    `
    // Keyed in batches through the one normalization the adapter writes with.
    for (;;) {
      const rows = yield* sql<{ id: bigint; name: string }>`
        SELECT id, name FROM pets WHERE name_key IS NULL ORDER BY id LIMIT 5000`
      if (rows.length === 0) break
      yield* sql`
        UPDATE pets SET name_key = keyed.name_key
        FROM unnest(${rows.map((row) => String(row.id))}::bigint[], ${rows.map((row) => searchKey(row.name))}::text[])
          AS keyed (id, name_key)
        WHERE pets.id = keyed.id`
    }
    // A small pending list (64 kB, not the default 4 MB): every search scans the entries
    // not yet merged into the index, and at 200,000 pets written in bulk a full list made a
    // search 29 ms instead of 6 ms (EXPLAIN ANALYZE, `milo 123`); creates still batch theirs.
    yield* sql`
      CREATE INDEX pets_name_key_trgm ON pets USING gin (name_key gin_trgm_ops)
        WITH (gin_pending_list_limit = 64) WHERE deleted_at IS NULL
    `
    yield* sql`
      CREATE TABLE pet_tags (
        tag text COLLATE "C" NOT NULL,
        pet_id bigint NOT NULL,
        PRIMARY KEY (tag, pet_id)
      )
    `
    yield* sql`
      CREATE TABLE tag_counts (
        tag text COLLATE "C" NOT NULL,
        slot integer NOT NULL CONSTRAINT tag_counts_slot_range CHECK (slot BETWEEN 0 AND 15),
        pets bigint NOT NULL,
        PRIMARY KEY (tag, slot)
      )
    `
    // In tag order, so two writers lock the rows of a slot in the same order.
    yield* sql`
      CREATE FUNCTION tag_counts_add(tags text[], change bigint) RETURNS void LANGUAGE sql AS $$
        INSERT INTO tag_counts (tag, slot, pets)
        SELECT tag, pg_backend_pid() % 16, change FROM unnest(tags) AS tag ORDER BY tag
        ON CONFLICT (tag, slot) DO UPDATE SET pets = tag_counts.pets + EXCLUDED.pets
      $$
    `
    // The old row's tags out (when it was not retired), the new row's in (when it is not).
    yield* sql`
      CREATE FUNCTION pet_tags_follow() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP <> 'INSERT' AND OLD.deleted_at IS NULL AND cardinality(OLD.tags) > 0 THEN
          DELETE FROM pet_tags WHERE tag = ANY (OLD.tags) AND pet_id = OLD.id;
          PERFORM tag_counts_add(OLD.tags, -1);
        END IF;
        IF TG_OP <> 'DELETE' AND NEW.deleted_at IS NULL AND cardinality(NEW.tags) > 0 THEN
          INSERT INTO pet_tags (tag, pet_id) SELECT tag, NEW.id FROM unnest(NEW.tags) AS tag;
          PERFORM tag_counts_add(NEW.tags, 1);
        END IF;
        RETURN NULL;
      END
      $$
    `
    yield* sql`
      CREATE TRIGGER pet_tags_insert AFTER INSERT ON pets
      FOR EACH ROW WHEN (cardinality(NEW.tags) > 0) EXECUTE FUNCTION pet_tags_follow()
    `
    yield* sql`
      CREATE TRIGGER pet_tags_update AFTER UPDATE ON pets
      FOR EACH ROW WHEN (OLD.tags IS DISTINCT FROM NEW.tags OR (OLD.deleted_at IS NULL) <> (NEW.deleted_at IS NULL))
      EXECUTE FUNCTION pet_tags_follow()
    `
    yield* sql`
      CREATE TRIGGER pet_tags_delete AFTER DELETE ON pets
      FOR EACH ROW WHEN (cardinality(OLD.tags) > 0) EXECUTE FUNCTION pet_tags_follow()
    `
    yield* sql`
      CREATE FUNCTION pet_tags_clear() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        TRUNCATE pet_tags, tag_counts;
        RETURN NULL;
      END
      $$
    `
    yield* sql`
      CREATE TRIGGER pet_tags_clear AFTER TRUNCATE ON pets
      FOR EACH STATEMENT EXECUTE FUNCTION pet_tags_clear()
    `
  }),
  // What every pet write runs in the database, the same rules at a fraction of the cost.
  // A SQL function that PostgreSQL cannot inline (a subquery, an UPDATE) is parsed and
  // planned again on every statement that calls it, and each statement a plpgsql function
  // runs through SPI starts an executor of its own: the tags' CHECK now decides with
  // plpgsql's own expressions, and each trigger runs its statements with the functions it
  // called inlined. Per pet insert (track_functions, 20,000 creates through the API): the
  // CHECK 63 → 15 µs, the status counts 140 → about 120 µs; the database's CPU per create
  // 481-551 → 271-302 µs (interleaved runs of the service before and after).
  "0021_lighter_pet_writes": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`
      CREATE OR REPLACE FUNCTION pet_tags_valid(tags text[]) RETURNS boolean LANGUAGE plpgsql IMMUTABLE AS $$
      BEGIN
        IF cardinality(tags) = 0 THEN
          RETURN true;
        END IF;
        IF array_ndims(tags) <> 1 OR cardinality(tags) > ${sql.literal(String(PET_TAGS_MAX))} THEN
          RETURN false;
        END IF;
        FOR i IN 1..cardinality(tags) LOOP
          IF tags[i] IS NULL OR tags[i] !~ '${sql.literal(PET_TAG_PATTERN)}' OR tags[i] = ANY (tags[1:i - 1]) THEN
            RETURN false;
          END IF;
        END LOOP;
        RETURN true;
      END
      $$
    `
    // The net change of each status, written only when one is not 0 (0008: a claim that
    // changes no status must not hold a slot), in one statement whatever the operation.
    yield* sql`
      CREATE OR REPLACE FUNCTION pet_counts_follow() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          UPDATE pet_counts AS c SET available = c.available + a.available, pending = c.pending + a.pending,
                                     sold = c.sold + a.sold, none = c.none + a.none
          FROM (SELECT count(*) FILTER (WHERE status = 'available') AS available, count(*) FILTER (WHERE status = 'pending') AS pending,
                       count(*) FILTER (WHERE status = 'sold') AS sold, count(*) FILTER (WHERE status IS NULL) AS none
                FROM added WHERE deleted_at IS NULL) AS a
          WHERE c.slot = pg_backend_pid() % 16 AND (a.available <> 0 OR a.pending <> 0 OR a.sold <> 0 OR a.none <> 0);
        ELSIF TG_OP = 'DELETE' THEN
          UPDATE pet_counts AS c SET available = c.available - r.available, pending = c.pending - r.pending,
                                     sold = c.sold - r.sold, none = c.none - r.none
          FROM (SELECT count(*) FILTER (WHERE status = 'available') AS available, count(*) FILTER (WHERE status = 'pending') AS pending,
                       count(*) FILTER (WHERE status = 'sold') AS sold, count(*) FILTER (WHERE status IS NULL) AS none
                FROM removed WHERE deleted_at IS NULL) AS r
          WHERE c.slot = pg_backend_pid() % 16 AND (r.available <> 0 OR r.pending <> 0 OR r.sold <> 0 OR r.none <> 0);
        ELSE
          UPDATE pet_counts AS c SET available = c.available + a.available - r.available, pending = c.pending + a.pending - r.pending,
                                     sold = c.sold + a.sold - r.sold, none = c.none + a.none - r.none
          FROM (SELECT count(*) FILTER (WHERE status = 'available') AS available, count(*) FILTER (WHERE status = 'pending') AS pending,
                       count(*) FILTER (WHERE status = 'sold') AS sold, count(*) FILTER (WHERE status IS NULL) AS none
                FROM added WHERE deleted_at IS NULL) AS a,
               (SELECT count(*) FILTER (WHERE status = 'available') AS available, count(*) FILTER (WHERE status = 'pending') AS pending,
                       count(*) FILTER (WHERE status = 'sold') AS sold, count(*) FILTER (WHERE status IS NULL) AS none
                FROM removed WHERE deleted_at IS NULL) AS r
          WHERE c.slot = pg_backend_pid() % 16
            AND (a.available <> r.available OR a.pending <> r.pending OR a.sold <> r.sold OR a.none <> r.none);
        END IF;
        RETURN NULL;
      END
      $$
    `
    yield* sql`DROP FUNCTION pet_counts_add(bigint, bigint, bigint, bigint)`
    // The tag counts still in tag order, so two writers lock the rows of a slot in the same order.
    yield* sql`
      CREATE OR REPLACE FUNCTION pet_tags_follow() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP <> 'INSERT' AND OLD.deleted_at IS NULL AND cardinality(OLD.tags) > 0 THEN
          DELETE FROM pet_tags WHERE tag = ANY (OLD.tags) AND pet_id = OLD.id;
          INSERT INTO tag_counts (tag, slot, pets)
          SELECT tag, pg_backend_pid() % 16, -1 FROM unnest(OLD.tags) AS tag ORDER BY tag
          ON CONFLICT (tag, slot) DO UPDATE SET pets = tag_counts.pets + EXCLUDED.pets;
        END IF;
        IF TG_OP <> 'DELETE' AND NEW.deleted_at IS NULL AND cardinality(NEW.tags) > 0 THEN
          INSERT INTO pet_tags (tag, pet_id) SELECT tag, NEW.id FROM unnest(NEW.tags) AS tag;
          INSERT INTO tag_counts (tag, slot, pets)
          SELECT tag, pg_backend_pid() % 16, 1 FROM unnest(NEW.tags) AS tag ORDER BY tag
          ON CONFLICT (tag, slot) DO UPDATE SET pets = tag_counts.pets + EXCLUDED.pets;
        END IF;
        RETURN NULL;
      END
      $$
    `
    yield* sql`DROP FUNCTION tag_counts_add(text[], bigint)`
  })
})

const migrate = Migrator.make({})

/**
 * Runs the migrations of `migrations` that the database has not recorded, in id order,
 * and returns them. Concurrent callers are safe: each step holds an ACCESS EXCLUSIVE lock
 * on the migrations table inside its transaction, so a second instance waits, then finds
 * nothing left to do.
 *
 * effect/sql's Migrator runs only ids above the highest recorded one: a migration
 * numbered below one that already ran (written on a branch, merged after a later-numbered
 * one shipped) would be skipped for good. So the migrations it leaves out are run here
 * after it, each recorded like the Migrator records it. They must not depend on the
 * higher-numbered ones, which is true of migrations written concurrently.
 */
export const runFrom = (migrations: Migrator.Loader) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const ran = yield* migrate({ loader: migrations, table: MIGRATIONS_TABLE })
    const recorded = sql<{ migration_id: number }>`SELECT migration_id FROM ${sql(MIGRATIONS_TABLE)}`
    const unrecorded = Effect.gen(function*() {
      const applied = new Set((yield* recorded).map((row) => row.migration_id))
      return (yield* migrations).filter(([id]) => !applied.has(id))
    })
    // The common case, nothing left out, costs one query and takes no lock.
    if ((yield* unrecorded).length === 0) return ran
    const skipped = yield* sql.withTransaction(Effect.gen(function*() {
      yield* sql`LOCK TABLE ${sql(MIGRATIONS_TABLE)} IN ACCESS EXCLUSIVE MODE`
      const missing = yield* unrecorded
      for (const [id, name, load] of missing) {
        yield* Effect.flatMap(load, (migration: Effect.Effect<unknown, unknown, SqlClient.SqlClient>) => migration).pipe(
          Effect.mapError((cause) => new Migrator.MigrationError({ cause, kind: "Failed", message: `Migration "${id}_${name}" failed` }))
        )
        yield* sql`INSERT INTO ${sql(MIGRATIONS_TABLE)} ${sql.insert({ migration_id: id, name })}`
      }
      return missing.map(([id, name]) => [id, name] as const)
    }))
    return [...ran, ...skipped]
  })

/** Runs the store's pending migrations (see {@link runFrom}). */
export const run = runFrom(loader)
