/**
 * PostgreSQL PetStore for the Fastify peers and the Effect floor on pg, on node-postgres:
 * a pool of 10, named (prepared) statements, and the same table, constraints and
 * (status, id) index as Animal Store's migration 0001 (pets-table.ts), so all run the
 * same keyset queries on the same plan.
 */
import pg from "pg"
import type { NewPet, PageQuery, Pet, PetStore } from "./pet-store.ts"
import { COLUMNS, type PetRow, SCHEMA, toPet } from "./pets-table.ts"

// int8 arrives as a string by default; BigInt keeps every int64 exact.
pg.types.setTypeParser(pg.types.builtins.INT8, BigInt)

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
