/**
 * The Effect floor's PostgreSQL store on @effect/sql-pg, the driver Animal Store's SQL
 * adapters run on: the same pool size (10), prepared statements (sql-pg prepares and
 * caches every statement by default), no multiplexing (as Animal Store's PostgresClient
 * sets it), and the same table, index and statements as pg-store.ts, each statement an
 * Effect run by the request's own fiber. Rows are mapped to pets by hand, as pg-store.ts
 * maps them: no schema decoding, no events, no deadline, no span of its own (sql-pg opens
 * its statement span, as it does under Animal Store). What it costs over the node-postgres
 * store under the same Effect floor is the driver's share; what Animal Store's PostgreSQL
 * mode costs over it is Animal Store's adapter and features.
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import { Effect, Redacted } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import type { EffectPetStore } from "./effect-store.ts"
import { COLUMNS, type PetRow, SCHEMA, toPet } from "./pets-table.ts"

export const makeSqlPgStore = Effect.fnUntraced(function*(url: string) {
  const sql = yield* PgClient.make({ url: Redacted.make(url), maxConnections: 10, multiplex: false }).pipe(
    Effect.provide(Reactivity.layer)
  )
  for (const statement of SCHEMA) yield* sql.unsafe(statement)
  const columns = sql.literal(COLUMNS)

  const store: EffectPetStore = {
    create: (pet) =>
      Effect.map(
        sql<PetRow>`INSERT INTO pets (name, category_id, status)
                    VALUES (${pet.name}, ${pet.categoryId}, ${pet.status ?? null}) RETURNING ${columns}`,
        (rows) => toPet(rows[0]!)
      ),
    get: (id) =>
      Effect.map(
        sql<PetRow>`SELECT ${columns} FROM pets WHERE id = ${id}`,
        (rows) => rows[0] === undefined ? undefined : toPet(rows[0])
      ),
    list: (query) =>
      Effect.map(
        query.status === undefined
          ? sql<PetRow>`SELECT ${columns} FROM pets WHERE id > ${query.after ?? 0n} ORDER BY id LIMIT ${query.limit}`
          : sql<PetRow>`SELECT ${columns} FROM pets
                        WHERE status = ${query.status} AND id > ${query.after ?? 0n} ORDER BY id LIMIT ${query.limit}`,
        (rows) => rows.map(toPet)
      )
  }
  return store
})
