/**
 * The peers' `pets` table on PostgreSQL, shared by the node-postgres store (pg-store.ts)
 * and the @effect/sql-pg one (sqlpg-store.ts): the same table, constraints and
 * (status, id) index as Animal Store's migration 0001, so every PostgreSQL peer runs the
 * same keyset queries on the same plan, and the same hand-written row mapping (no schema).
 */
import type { Pet, PetStatus } from "./pet-store.ts"

export const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS pets (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name text NOT NULL
      CONSTRAINT pets_name_length CHECK (char_length(name) BETWEEN 1 AND 255)
      CONSTRAINT pets_name_not_blank CHECK (name ~ '[^[:space:]]')
      CONSTRAINT pets_name_no_controls CHECK (name !~ '[\\u0001-\\u001f]'),
    category_id bigint NOT NULL,
    status text CONSTRAINT pets_status_enum CHECK (status IN ('available', 'pending', 'sold')),
    created_at timestamptz NOT NULL DEFAULT now()
  )`,
  `CREATE INDEX IF NOT EXISTS pets_status_id ON pets (status, id)`
]

/** A row as both drivers hand it back: int8 as bigint. */
export interface PetRow {
  readonly id: bigint
  readonly name: string
  readonly category_id: bigint
  readonly status: PetStatus | null
}

/** The columns of a PetRow, in every statement that reads or returns pets. */
export const COLUMNS = "id, name, category_id, status"

export const toPet = (row: PetRow): Pet =>
  row.status === null
    ? { id: row.id, name: row.name, categoryId: row.category_id }
    : { id: row.id, name: row.name, categoryId: row.category_id, status: row.status }
