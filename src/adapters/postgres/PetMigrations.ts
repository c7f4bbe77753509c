import { Effect } from "effect"
import { Migrator, SqlClient } from "effect/sql"

/** Table that records which migrations have run. */
export const MIGRATIONS_TABLE = "animal_store_migrations"

/**
 * The schema, versioned. Never edit a migration that has shipped: add the next one.
 * The CHECK constraints mirror the domain's rules so that no other writer can store
 * a pet the service would refuse.
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
  })
})

/**
 * Runs pending migrations. Concurrent callers are safe: the migrator holds an
 * ACCESS EXCLUSIVE lock on its table inside the migration transaction, so a second
 * instance waits, then finds nothing left to do.
 */
export const run = Migrator.make({})({ loader, table: MIGRATIONS_TABLE })
