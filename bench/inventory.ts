/**
 * Child process: the inventory against a get by id on one store, as the catalogue grows.
 * At each size, the two run in interleaved rounds (compare.ts) and the answer is their
 * ratio: a count kept as pets change costs about a get at any size, a count over the
 * table grows with it (issue 20 measured 13x a get at 200,000 pets on PostgreSQL).
 *
 * - memory: pets created through the adapter.
 * - embedded / postgres: pets inserted with generate_series (as scale.ts seeds), so
 *   through whatever the schema does on an insert, then ANALYZEd.
 *
 * Usage (from bench/run.ts): node bench/inventory.ts '<json InventoryArgs>'
 * Writes an InventoryResult as JSON to args.resultPath.
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { writeFileSync } from "node:fs"
import * as EmbeddedDatabase from "../src/adapters/embedded/EmbeddedDatabase.ts"
import * as PetRepositoryMemory from "../src/adapters/memory/pets/PetRepositoryMemory.ts"
import { EventSequencer } from "../src/adapters/postgres/events/EventSequencer.ts"
import * as Migrations from "../src/adapters/postgres/Migrations.ts"
import * as PetRepositorySql from "../src/adapters/postgres/pets/PetRepositorySql.ts"
import { CategoryId } from "../src/domain/pets/CategoryId.ts"
import { NewPet } from "../src/domain/pets/NewPet.ts"
import { PetId } from "../src/domain/pets/PetId.ts"
import { PetName } from "../src/domain/pets/PetName.ts"
import type { PetRepository } from "../src/ports/pets/PetRepository.ts"
import { type Comparison, compare, effectChunk } from "./compare.ts"
import { STATUSES } from "./lib.ts"
import { runChildMain } from "./child-main.ts"
import { mulberry32 } from "../test/e2e/Mulberry32.ts"

export interface InventoryArgs {
  readonly adapter: "memory" | "embedded" | "postgres"
  readonly resultPath: string
  /** Catalogue sizes to measure at, ascending; the pets of one size stay for the next. */
  readonly sizes: ReadonlyArray<number>
  /** Calls per side and size. */
  readonly calls: number
  /** Wall-time budget per size (both sides together), in milliseconds. */
  readonly budgetMs: number
  /** embedded: the (empty, temporary) data directory. */
  readonly dataDir?: string
  /** postgres: URL of an empty database. */
  readonly url?: string
}

export interface InventoryRow extends Comparison {
  readonly adapter: string
  readonly pets: number
  readonly seedMs: number
}

export interface InventoryResult {
  readonly adapter: string
  readonly rows: ReadonlyArray<InventoryRow>
}

const args = JSON.parse(process.argv[2] ?? "{}") as InventoryArgs
const ROUNDS = 10
const WARMUP = 20

const newPetAt = (i: number): NewPet => {
  const status = STATUSES[i % STATUSES.length]
  const name = PetName.make(`pet-${i}`)
  const categoryId = CategoryId.make(BigInt(1 + (i % 50)))
  return status === undefined ? new NewPet({ name, categoryId }) : new NewPet({ name, categoryId, status })
}

/** Grows the store from `from` pets to `to`. */
type Seed = (from: number, to: number) => Effect.Effect<void, unknown>

const seedMemory = (repo: PetRepository["Service"]): Seed => (from, to) =>
  Effect.asVoid(Effect.forEach(Array.from({ length: to - from }, (_, i) => newPetAt(from + i + 1)), repo.create, { discard: true }))

const seedSql: Effect.Effect<Seed, never, SqlClient.SqlClient> = Effect.map(SqlClient.SqlClient, (sql) => (from, to) =>
  Effect.gen(function*() {
    yield* sql`INSERT INTO pets (name, category_id, status)
               SELECT 'pet-' || i, 1 + i % 50, (ARRAY['available', 'pending', 'sold', NULL])[1 + i % 4]
               FROM generate_series(${from + 1}::int, ${to}::int) AS i ORDER BY i`
    yield* sql`ANALYZE pets`
  }))

const measure = (repo: PetRepository["Service"], seed: Seed) =>
  Effect.gen(function*() {
    const rows: Array<InventoryRow> = []
    let size = 0
    for (const pets of args.sizes) {
      const seeding = performance.now()
      yield* seed(size, pets)
      const seedMs = performance.now() - seeding
      size = pets
      const inventory = yield* repo.inventory
      const counted = inventory.available + inventory.pending + inventory.sold + inventory.none
      if (counted !== pets) return yield* Effect.die(`the inventory counts ${counted} pets of ${pets}`)
      const random = mulberry32(42)
      const ids = Array.from({ length: args.calls + WARMUP }, () => PetId.make(BigInt(1 + Math.floor(random() * pets))))
      const subject = effectChunk(() => repo.inventory)
      const reference = effectChunk((i) => repo.get(ids[i % ids.length]!))
      yield* subject(0, WARMUP)
      yield* reference(args.calls, WARMUP)
      const result = yield* compare({ total: args.calls, rounds: ROUNDS, budgetMs: args.budgetMs, subject, reference })
      rows.push({ adapter: args.adapter, pets, seedMs: Math.round(seedMs), ...result })
    }
    return rows
  })

// The production default of DATABASE_STATEMENT_TIMEOUT.
const sqlRepository = PetRepositorySql.make({ timeout: "5 seconds" }).pipe(
  Effect.provide(Layer.merge(Migrations.layer, EventSequencer.layer))
)

const main = Effect.gen(function*() {
  let rows: ReadonlyArray<InventoryRow>
  switch (args.adapter) {
    case "memory": {
      const repo = yield* PetRepositoryMemory.make
      rows = yield* measure(repo, seedMemory(repo))
      break
    }
    case "embedded": {
      if (args.dataDir === undefined) return yield* Effect.die("embedded needs dataDir")
      rows = yield* Effect.flatMap(Effect.all([sqlRepository, seedSql]), ([repo, seed]) => measure(repo, seed)).pipe(
        Effect.provide(EmbeddedDatabase.layer({ dataDir: args.dataDir }))
      )
      break
    }
    case "postgres": {
      if (args.url === undefined) return yield* Effect.die("postgres needs url")
      rows = yield* Effect.flatMap(Effect.all([sqlRepository, seedSql]), ([repo, seed]) => measure(repo, seed)).pipe(
        Effect.provide(PgClient.layer({ url: Redacted.make(args.url), maxConnections: 2 }))
      )
      break
    }
  }
  const result: InventoryResult = { adapter: args.adapter, rows }
  writeFileSync(args.resultPath, JSON.stringify(result, null, 2))
}).pipe(Effect.scoped)

runChildMain(`inventory bench (${args.adapter})`, main)
