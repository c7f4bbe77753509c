/**
 * PostgreSQL PetStore for the Fastify peer, on node-postgres: a pool of 10, named
 * (prepared) statements, and the same table, constraints and (status, id) index as
 * Animal Store's migration 0001, so both run the same keyset queries on the same plan.
 */
import pg from "pg"
import type { NewPet, PageQuery, Pet, PetStatus, PetStore } from "./pet-store.ts"

// int8 arrives as a string by default; BigInt keeps every int64 exact.
pg.types.setTypeParser(pg.types.builtins.INT8, BigInt)

const SCHEMA = [
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

interface PetRow {
  readonly id: bigint
  readonly name: string
  readonly category_id: bigint
  readonly status: PetStatus | null
}

const COLUMNS = "id, name, category_id, status"

const toPet = (row: PetRow): Pet =>
  row.status === null
    ? { id: row.id, name: row.name, categoryId: row.category_id }
    : { id: row.id, name: row.name, categoryId: row.category_id, status: row.status }

export const makePgStore = async (connectionString: string): Promise<PetStore> => {
  const pool = new pg.Pool({ connectionString, max: 10 })
  for (const statement of SCHEMA) await pool.query(statement)

  const create = async (pet: NewPet): Promise<Pet> => {
    const result = await pool.query<PetRow>({
      name: "pets_insert",
      text: `INSERT INTO pets (name, category_id, status) VALUES ($1, $2, $3) RETURNING ${COLUMNS}`,
      values: [pet.name, pet.categoryId, pet.status ?? null]
    })
    return toPet(result.rows[0]!)
  }

  const get = async (id: bigint): Promise<Pet | undefined> => {
    const result = await pool.query<PetRow>({
      name: "pets_by_id",
      text: `SELECT ${COLUMNS} FROM pets WHERE id = $1`,
      values: [id]
    })
    const row = result.rows[0]
    return row === undefined ? undefined : toPet(row)
  }

  const list = async (query: PageQuery): Promise<ReadonlyArray<Pet>> => {
    const after = query.after ?? 0n
    const result = query.status === undefined
      ? await pool.query<PetRow>({
        name: "pets_page",
        text: `SELECT ${COLUMNS} FROM pets WHERE id > $1 ORDER BY id LIMIT $2`,
        values: [after, query.limit]
      })
      : await pool.query<PetRow>({
        name: "pets_page_by_status",
        text: `SELECT ${COLUMNS} FROM pets WHERE status = $1 AND id > $2 ORDER BY id LIMIT $3`,
        values: [query.status, after, query.limit]
      })
    return result.rows.map(toPet)
  }

  return { create, get, list, close: () => pool.end() }
}
