import { Duration, Effect, Layer, Schema } from "effect"
import { type Migrator, SqlClient, type SqlError, SqlSchema } from "effect/sql"
import { CategoryId } from "../../../domain/pets/CategoryId.ts"
import { PetNotFound, StoreUnavailable } from "../../../domain/Errors.ts"
import { petData } from "../../../domain/events/EventData.ts"
import type { NewPet } from "../../../domain/pets/NewPet.ts"
import { Pet } from "../../../domain/pets/Pet.ts"
import { PetId } from "../../../domain/pets/PetId.ts"
import type { PetInventory } from "../../../domain/pets/PetInventory.ts"
import { PetName } from "../../../domain/pets/PetName.ts"
import type { PetQuery } from "../../../domain/pets/PetQuery.ts"
import { PetStatus } from "../../../domain/pets/PetStatus.ts"
import { PetRepository } from "../../../ports/pets/PetRepository.ts"
import { appendEvent } from "../events/EventAppend.ts"
import * as Migrations from "../Migrations.ts"
import { unavailableOrDie } from "../UnavailableOrDie.ts"

/** Tuning for the SQL-backed repository. */
export interface Options {
  /** Longest a single repository call may take before it fails with StoreUnavailable. */
  readonly timeout: Duration.Input
  /**
   * The client sends statements of concurrent calls over one connection (sql-pg's
   * `multiplex`, as the embedded store does), where a statement already sent still runs
   * after its call has failed at `timeout`: a create answered 503 would be stored when
   * the database got to it, and stored again when the client retried. With this set, a
   * create's insert takes effect only if the database starts it within three quarters
   * of `timeout` (by the database's clock, which must be this machine's), leaving the
   * last quarter for its answer to arrive. Default: false.
   */
  readonly sharedConnection?: boolean | undefined
}

// Rows are decoded through the domain schemas, so a row no service could have written fails loudly.
const PetRow = Schema.Struct({
  id: PetId,
  name: PetName,
  category_id: CategoryId,
  status: Schema.NullOr(PetStatus)
})

const InventoryRow = Schema.Struct({
  available: Schema.BigInt,
  pending: Schema.BigInt,
  sold: Schema.BigInt,
  none: Schema.BigInt
})

const toInventory = (row: typeof InventoryRow.Type): PetInventory => ({
  available: Number(row.available),
  pending: Number(row.pending),
  sold: Number(row.sold),
  none: Number(row.none)
})

const toPet = (row: typeof PetRow.Type): Pet =>
  new Pet(
    row.status === null
      ? { id: row.id, name: row.name, categoryId: row.category_id }
      : { id: row.id, name: row.name, categoryId: row.category_id, status: row.status },
    { disableChecks: true }
  )

/**
 * The keyset page query. Exported so a test can EXPLAIN exactly what the adapter runs:
 * `id > after ORDER BY id LIMIT n` walks the primary key, and with a status filter the
 * `(status, id)` index, so a deep page never reads the rows before it.
 */
export const pageStatement = (
  sql: SqlClient.SqlClient,
  page: { readonly after: bigint; readonly limit: number; readonly status: string | null }
) =>
  page.status === null
    ? sql`SELECT id, name, category_id, status FROM pets
          WHERE id > ${page.after} ORDER BY id LIMIT ${page.limit}`
    : sql`SELECT id, name, category_id, status FROM pets
          WHERE status = ${page.status} AND id > ${page.after} ORDER BY id LIMIT ${page.limit}`

/**
 * The inventory query. Exported so a test can EXPLAIN it: it sums the 16 rows of
 * `pet_counts`, which triggers keep in each change's own transaction (migration 0006),
 * and never reads `pets`. One statement, so the counts are of one snapshot.
 */
export const inventoryStatement = (sql: SqlClient.SqlClient) =>
  sql`SELECT sum(available)::bigint AS available, sum(pending)::bigint AS pending,
             sum(sold)::bigint AS sold, sum(none)::bigint AS none
      FROM pet_counts`

/** Builds a PetRepository on any PostgreSQL-speaking SqlClient, once the migrations have run. */
export const make = (options: Options) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const migrations = yield* Migrations.Migrations
    const timeout = Duration.fromInputUnsafe(options.timeout)
    const guard = unavailableOrDie(timeout)

    const insert = SqlSchema.findOne({
      Request: Schema.Struct({ name: Schema.String, categoryId: Schema.BigInt, status: Schema.NullOr(Schema.String) }),
      Result: PetRow,
      execute: (pet) =>
        sql`INSERT INTO pets (name, category_id, status)
            VALUES (${pet.name}, ${pet.categoryId}, ${pet.status})
            RETURNING id, name, category_id, status`
    })

    // The insert of a shared connection: no row when the database reaches it after `deadline` (epoch ms).
    const insertInTime = SqlSchema.findAll({
      Request: Schema.Struct({
        name: Schema.String,
        categoryId: Schema.BigInt,
        status: Schema.NullOr(Schema.String),
        deadline: Schema.Number
      }),
      Result: PetRow,
      execute: (pet) =>
        sql`INSERT INTO pets (name, category_id, status)
            SELECT ${pet.name}::text, ${pet.categoryId}::bigint, ${pet.status}::text
            WHERE clock_timestamp() < to_timestamp(${pet.deadline}::float8 / 1000)
            RETURNING id, name, category_id, status`
    })
    // Three quarters of the timeout to start the insert, the last quarter for its answer to arrive.
    const startWithinMillis = Duration.toMillis(timeout) * 0.75
    const tooLate = new StoreUnavailable({
      message: `the database did not start the create within ${Duration.format(Duration.millis(startWithinMillis))}`
    })

    const byId = SqlSchema.findAll({
      Request: Schema.BigInt,
      Result: PetRow,
      execute: (id) => sql`SELECT id, name, category_id, status FROM pets WHERE id = ${id}`
    })

    const page = SqlSchema.findAll({
      Request: Schema.Struct({
        limit: Schema.Number,
        status: Schema.NullOr(Schema.String),
        after: Schema.BigInt
      }),
      Result: PetRow,
      execute: (page) => pageStatement(sql, page)
    })

    const counts = SqlSchema.findOne({
      Request: Schema.Void,
      Result: InventoryRow,
      execute: () => inventoryStatement(sql)
    })

    // The pet and its event commit together (EventAppend: the event is the last write).
    const recorded = <E>(created: Effect.Effect<Pet, E | SqlError.SqlError>) =>
      sql.withTransaction(Effect.tap(created, (pet) => appendEvent(sql, "pet.created", petData(pet))))

    const create = Effect.fn("PetRepository.create")((pet: NewPet) => {
      const row = { name: pet.name, categoryId: pet.categoryId, status: pet.status ?? null }
      return options.sharedConnection === true
        ? Effect.suspend(() => {
          // Wall-clock time, as the database's clock_timestamp() is (a TestClock would not do),
          // taken at the call: the transaction's BEGIN may itself wait behind other statements.
          const deadline = Date.now() + startWithinMillis
          return recorded(insertInTime({ ...row, deadline }).pipe(
            Effect.flatMap((rows) => rows[0] === undefined ? Effect.fail(tooLate) : Effect.succeed(toPet(rows[0])))
          ))
        }).pipe(guard)
        : recorded(insert(row).pipe(Effect.catchTag("NoSuchElementError", Effect.die), Effect.map(toPet))).pipe(guard)
    })

    const get = Effect.fn("PetRepository.get")(function*(id: PetId) {
      const rows = yield* guard(byId(id))
      const row = rows[0]
      if (row === undefined) return yield* new PetNotFound({ id })
      return toPet(row)
    })

    const list = Effect.fn("PetRepository.list")((query: PetQuery) =>
      page({ limit: query.limit, status: query.status ?? null, after: query.after ?? 0n }).pipe(
        Effect.map((rows) => rows.map(toPet)),
        guard
      )
    )

    const inventory = counts(undefined).pipe(
      Effect.catchTag("NoSuchElementError", Effect.die),
      Effect.map(toInventory),
      guard,
      Effect.withSpan("PetRepository.inventory")
    )

    // Ready when the database answers and records this release's migrations.
    const ready = guard(migrations.check).pipe(
      Effect.catchTag("SchemaOutOfDate", (error) => Effect.fail(new StoreUnavailable({ message: error.message }))),
      Effect.withSpan("PetRepository.ready")
    )

    return PetRepository.of({ create, get, list, inventory, ready })
  })

/** A PetRepository on the SqlClient in context (PostgreSQL server or embedded PGlite). */
export const layer = (
  options: Options
): Layer.Layer<PetRepository, Migrator.MigrationError | SqlError.SqlError, SqlClient.SqlClient> =>
  Layer.effect(PetRepository, make(options)).pipe(Layer.provide(Migrations.layer))
