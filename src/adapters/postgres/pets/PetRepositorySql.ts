import { Duration, Effect, Layer, Result, Schema } from "effect"
import { type Migrator, SqlClient, type SqlError, SqlSchema, type Statement } from "effect/sql"
import { CategoryId } from "../../../domain/pets/CategoryId.ts"
import { PetNotFound, StoreUnavailable } from "../../../domain/Errors.ts"
import { petData, petUpdatedData } from "../../../domain/events/EventData.ts"
import { isOpen, OrderStatus } from "../../../domain/orders/OrderStatus.ts"
import type { NewPet } from "../../../domain/pets/NewPet.ts"
import { type Pet, trustedPet } from "../../../domain/pets/Pet.ts"
import { decideDelete, decideUpdate, type PetPrecondition } from "../../../domain/pets/PetChanges.ts"
import { PetId } from "../../../domain/pets/PetId.ts"
import type { PetInventory } from "../../../domain/pets/PetInventory.ts"
import { PetName } from "../../../domain/pets/PetName.ts"
import type { PetPatch } from "../../../domain/pets/PetPatch.ts"
import type { PetQuery, TagCount, TagQuery } from "../../../domain/pets/PetQuery.ts"
import { searchKey } from "../../../domain/pets/PetSearch.ts"
import { PetStatus } from "../../../domain/pets/PetStatus.ts"
import { PetTag } from "../../../domain/pets/PetTag.ts"
import { PetVersion } from "../../../domain/pets/PetVersion.ts"
import { PetRepository } from "../../../ports/pets/PetRepository.ts"
import { appendEvent, recording } from "../events/EventAppend.ts"
import { EventSequencer } from "../events/EventSequencer.ts"
import * as Migrations from "../Migrations.ts"
import { unavailableOrDie } from "../UnavailableOrDie.ts"
import * as Spans from "../../observability/Spans.ts"

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

// The columns of a PetRow, in every statement that reads or returns pets.
const PET_COLUMNS = "id, name, category_id, status, tags, version"
// The same, of the pets aliased `p` in a join.
const P_COLUMNS = PET_COLUMNS.split(", ").map((column) => `p.${column}`).join(", ")

// The order statuses in which an order owns its pet's status.
const OPEN_ORDER_STATUSES = OrderStatus.literals.filter(isOpen)

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

// A row is checked column by column, by hand, not decoded through the domain's schemas:
// the table's types and CHECK constraints keep the domain's rules for every writer (an int64
// id and category, a name's length, blanks and controls, the status's values, a version from
// 1: migrations 0001, 0002 and 0009), so what is left to check is each column's type.
// Decoding a 21-row page through Schema cost about 12 KB of garbage per list and a fifth
// of the adapter's time. A row of any other shape, which no migration here made, dies.
const STATUSES: ReadonlySet<unknown> = new Set(PetStatus.literals)

// pets_tags_valid (0020) keeps the tags' rules; the driver gives a text[] as an array of strings.
const isTextArray = (value: unknown): value is ReadonlyArray<string> =>
  Array.isArray(value) && value.every((each) => typeof each === "string")

const toPet = (row: unknown): Pet => {
  const { category_id, id, name, status, tags, version } = row as Record<string, unknown>
  if (
    typeof id !== "bigint" || typeof name !== "string" || typeof category_id !== "bigint" ||
    (status !== null && !STATUSES.has(status)) || !isTextArray(tags) || typeof version !== "number"
  ) {
    throw new Error(`the pets table returned a row of another shape: ${Object.keys(row as object).join(", ")}`)
  }
  const fields = {
    id: id as PetId,
    name: name as PetName,
    categoryId: category_id as CategoryId,
    tags: tags as ReadonlyArray<PetTag>,
    version: version as PetVersion
  }
  return trustedPet(status === null ? fields : { ...fields, status: status as PetStatus })
}

// The statements that return pets bind domain values as they are (ids and categories are
// bigints, the rest strings and numbers), so only their rows are read: a request schema
// would re-encode, on every call, values that are already what the driver takes.
// `tags` bind as a text[]; `nameKey` is searchKey of the name.
type NewRow = {
  readonly name: string
  readonly categoryId: bigint
  readonly status: string | null
  readonly tags: ReadonlyArray<string>
  readonly nameKey: string
}
const decodeRows = (rows: ReadonlyArray<unknown>) => Effect.sync(() => rows.map(toPet))
// The one row of an insert or update by id; none is a bug (the statement returns what it wrote).
const onePet = (rows: ReadonlyArray<unknown>) =>
  Effect.flatMap(decodeRows(rows), (pets) =>
    pets[0] === undefined ? Effect.die(new Error("the statement returned no row")) : Effect.succeed(pets[0]))

// A LIKE pattern matching the keys that contain `q`'s key; `%`, `_` and `\` in it match themselves.
const containing = (q: string): string => `%${searchKey(q).replace(/[\\%_]/g, "\\$&")}%`

/**
 * The keyset page query. Exported so a test can EXPLAIN exactly what the adapter runs:
 * `id > after ORDER BY id LIMIT n` walks the primary key, and with a status filter the
 * `(status, id)` index, so a deep page never reads the rows before it. Retired pets are
 * skipped as they come (they are few).
 * - With tags, it walks the first tag's `pet_tags` entries from `after` in pet id order
 *   and looks each pet up by id, checking the other tags on its row (`tags @>`), so a
 *   page reads about `limit` entries of that tag however many pets carry it. The lookup
 *   is a LATERAL subquery with LIMIT 1, which the planner cannot turn into a join: as a
 *   join, at 200,000 pets it chose a merge join that read the pets from the first id.
 * - A search (`q`) is `name_key LIKE '%key%'`, which the pets_name_key_trgm index
 *   serves when no tag narrows the pets first.
 */
export const pageStatement = (
  sql: SqlClient.SqlClient,
  page: {
    readonly after: bigint
    readonly limit: number
    readonly status: string | null
    readonly tags?: ReadonlyArray<string> | undefined
    readonly q?: string | undefined
  }
) => {
  const tags = page.tags ?? []
  if (tags.length === 0 && page.q === undefined) {
    return page.status === null
      ? sql`SELECT ${sql.literal(PET_COLUMNS)} FROM pets
            WHERE id > ${page.after} AND deleted_at IS NULL ORDER BY id LIMIT ${page.limit}`
      : sql`SELECT ${sql.literal(PET_COLUMNS)} FROM pets
            WHERE status = ${page.status} AND id > ${page.after} AND deleted_at IS NULL ORDER BY id LIMIT ${page.limit}`
  }
  const status = page.status === null ? sql.literal("") : sql` AND p.status = ${page.status}`
  const search = page.q === undefined ? sql.literal("") : sql` AND p.name_key LIKE ${containing(page.q)}`
  const others = tags.length <= 1 ? sql.literal("") : sql` AND p.tags @> ${tags}::text[]`
  return tags.length === 0
    ? sql`SELECT ${sql.literal(P_COLUMNS)} FROM pets AS p
          WHERE p.id > ${page.after} AND p.deleted_at IS NULL${status}${search} ORDER BY p.id LIMIT ${page.limit}`
    : sql`SELECT ${sql.literal(P_COLUMNS)} FROM pet_tags AS t
          CROSS JOIN LATERAL (
            SELECT ${sql.literal(P_COLUMNS)} FROM pets AS p
            WHERE p.id = t.pet_id AND p.deleted_at IS NULL${others}${status}${search} LIMIT 1) AS p
          WHERE t.tag = ${tags[0]!} AND t.pet_id > ${page.after}
          ORDER BY t.pet_id LIMIT ${page.limit}`
}

/**
 * The tags query. Exported so a test can EXPLAIN it: a walk of `tag_counts`' primary key
 * from `after`, summing each tag's slots (migration 0020), that never reads `pets`. A tag
 * whose slots sum to 0 (no pet carries it any more) is skipped.
 */
export const tagsStatement = (sql: SqlClient.SqlClient, page: { readonly after: string; readonly limit: number }) =>
  sql`SELECT tag, sum(pets)::bigint AS pets FROM tag_counts WHERE tag > ${page.after}
      GROUP BY tag HAVING sum(pets) > 0 ORDER BY tag LIMIT ${page.limit}`

const TagRow = Schema.Struct({ tag: PetTag, pets: Schema.BigInt })
const decodeTagRows = Schema.decodeUnknownEffect(Schema.Array(TagRow))
const toTagCounts = (rows: ReadonlyArray<unknown>) =>
  Effect.map(decodeTagRows(rows), (decoded): Array<TagCount> => decoded.map((row) => ({ tag: row.tag, pets: Number(row.pets) })))

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
    const sequencer = yield* EventSequencer
    const timeout = Duration.fromInputUnsafe(options.timeout)
    const guard = unavailableOrDie(timeout)

    // After each change commits (its own transaction, or this one statement), the sequencer
    // is woken to number the change's event.
    //
    // A create and its pet.created event in ONE statement, so a create stays one round trip
    // (on embedded PGlite's one connection, a transaction of three took several times as
    // long). The event's data is petData's JSON written by the database: the EventLog
    // contract checks on every store that the two agree.
    const recordingCreate = (insertPet: Statement.Statement<unknown>) =>
      recording((traceParent) =>
        sql`WITH inserted AS (${insertPet}),
                 recorded AS (
                   INSERT INTO events_pending (type, data, trace_parent)
                   SELECT 'pet.created', json_strip_nulls(json_build_object(
                     'id', id, 'name', name, 'categoryId', category_id, 'status', status, 'tags', tags, 'version', version)),
                   ${traceParent}
                   FROM inserted)
            SELECT ${sql.literal(PET_COLUMNS)} FROM inserted`
      )

    const insert = (pet: NewRow) =>
      recordingCreate(sql`INSERT INTO pets (name, category_id, status, tags, name_key)
          VALUES (${pet.name}, ${pet.categoryId}, ${pet.status}, ${pet.tags}::text[], ${pet.nameKey})
          RETURNING ${sql.literal(PET_COLUMNS)}`).pipe(Effect.flatMap(onePet))

    // The insert of a shared connection: no row when the database reaches it after `deadline` (epoch ms).
    const insertInTime = (pet: NewRow & { readonly deadline: number }) =>
      recordingCreate(sql`INSERT INTO pets (name, category_id, status, tags, name_key)
          SELECT ${pet.name}::text, ${pet.categoryId}::bigint, ${pet.status}::text, ${pet.tags}::text[], ${pet.nameKey}::text
          WHERE clock_timestamp() < to_timestamp(${pet.deadline}::float8 / 1000)
          RETURNING ${sql.literal(PET_COLUMNS)}`).pipe(Effect.flatMap(decodeRows))
    // Three quarters of the timeout to start the insert, the last quarter for its answer to arrive.
    const startWithinMillis = Duration.toMillis(timeout) * 0.75
    const tooLate = new StoreUnavailable({
      message: `the database did not start the create within ${Duration.format(Duration.millis(startWithinMillis))}`
    })

    const byId = (id: PetId) =>
      sql`SELECT ${sql.literal(PET_COLUMNS)} FROM pets WHERE id = ${id} AND deleted_at IS NULL`.pipe(
        Effect.flatMap(decodeRows)
      )

    // update and delete lock the pet first: an order's place and transitions write the pet
    // row too, so while it is held no order for it opens or closes.
    const lockPet = (id: PetId) =>
      sql`SELECT ${sql.literal(PET_COLUMNS)} FROM pets WHERE id = ${id} AND deleted_at IS NULL FOR UPDATE`.pipe(
        Effect.flatMap(decodeRows)
      )

    // A statement of its own, after the lock: in READ COMMITTED it sees the orders committed
    // up to the lock (one statement with the lock would see its own older snapshot).
    const openOrder = SqlSchema.findOne({
      Request: PetId,
      Result: Schema.Struct({ open: Schema.Boolean }),
      execute: (id) =>
        sql`SELECT EXISTS (SELECT 1 FROM orders WHERE pet_id = ${id} AND status IN ${sql.in(OPEN_ORDER_STATUSES)}) AS open`
    })

    const write = (pet: NewRow & { readonly id: PetId; readonly version: number }) =>
      sql`UPDATE pets SET name = ${pet.name}, category_id = ${pet.categoryId}, status = ${pet.status},
                          tags = ${pet.tags}::text[], name_key = ${pet.nameKey}, version = ${pet.version}
          WHERE id = ${pet.id} RETURNING ${sql.literal(PET_COLUMNS)}`.pipe(Effect.flatMap(onePet))

    const retire = (id: PetId) => sql`UPDATE pets SET deleted_at = now(), version = version + 1 WHERE id = ${id}`

    // The pet, locked, and whether an order owns its status; inside the caller's transaction.
    const lockedState = (id: PetId) =>
      Effect.gen(function*() {
        const pet = (yield* lockPet(id))[0]
        if (pet === undefined) return yield* new PetNotFound({ id })
        return { pet, hasOpenOrder: (yield* openOrder(id)).open }
      })

    const counts = SqlSchema.findOne({
      Request: Schema.Void,
      Result: InventoryRow,
      execute: () => inventoryStatement(sql)
    })

    const create = Spans.method("PetRepository.create", (pet: NewPet) => {
      const row = {
        name: pet.name,
        categoryId: pet.categoryId,
        status: pet.status ?? null,
        tags: pet.tags,
        nameKey: searchKey(pet.name)
      }
      return options.sharedConnection === true
        ? Effect.suspend(() => {
          // Wall-clock time, as the database's clock_timestamp() is (a TestClock would not do),
          // taken at the call: the transaction's BEGIN may itself wait behind other statements.
          const deadline = Date.now() + startWithinMillis
          return insertInTime({ ...row, deadline }).pipe(
            Effect.flatMap((pets) => pets[0] === undefined ? Effect.fail(tooLate) : Effect.succeed(pets[0])),
            Effect.tap(() => sequencer.wake)
          )
        }).pipe(guard)
        : guard(Effect.tap(insert(row), () => sequencer.wake))
    })

    const get = Spans.method("PetRepository.get", (id: PetId) =>
      Effect.flatMap(guard(byId(id)), (pets) =>
        pets[0] === undefined ? Effect.fail(new PetNotFound({ id })) : Effect.succeed(pets[0])))

    // One transaction each: lock, decide, write, and record the change's event.
    const update = Spans.method("PetRepository.update", (id: PetId, patch: PetPatch, precondition: PetPrecondition) =>
      sql.withTransaction(Effect.gen(function*() {
        const state = yield* lockedState(id)
        const decision = decideUpdate(state, patch, precondition)
        if (Result.isFailure(decision)) return yield* decision.failure
        const after = decision.success
        const pet = yield* write({
          id,
          name: after.name,
          categoryId: after.categoryId,
          status: after.status ?? null,
          tags: after.tags,
          nameKey: searchKey(after.name),
          version: after.version
        })
        yield* appendEvent(sql, "pet.updated", petUpdatedData(state.pet, pet))
        return pet
      })).pipe(Effect.tap(() => sequencer.wake), Effect.catchTag("NoSuchElementError", Effect.die), guard)
    )

    const remove = Spans.method("PetRepository.delete", (id: PetId, precondition: PetPrecondition) =>
      sql.withTransaction(Effect.gen(function*() {
        const state = yield* lockedState(id)
        const decision = decideDelete(state, precondition)
        if (Result.isFailure(decision)) return yield* decision.failure
        yield* retire(id)
        yield* appendEvent(sql, "pet.deleted", petData(state.pet))
      })).pipe(Effect.tap(() => sequencer.wake), Effect.catchTag("NoSuchElementError", Effect.die), guard)
    )

    const list = Spans.method("PetRepository.list", (query: PetQuery) =>
      pageStatement(sql, {
        limit: query.limit,
        status: query.status ?? null,
        after: query.after ?? 0n,
        tags: query.tags,
        q: query.q
      }).pipe(
        Effect.flatMap(decodeRows),
        guard
      )
    )

    // Tags are ASCII, so the empty string sorts before every one.
    const tags = Spans.method("PetRepository.tags", (query: TagQuery) =>
      tagsStatement(sql, { after: query.after ?? "", limit: query.limit }).pipe(Effect.flatMap(toTagCounts), guard))

    const inventory = counts(undefined).pipe(
      Effect.catchTag("NoSuchElementError", Effect.die),
      Effect.map(toInventory),
      guard,
      Spans.span("PetRepository.inventory")
    )

    // Ready when the database answers and records this release's migrations.
    const ready = guard(migrations.check).pipe(
      Effect.catchTag("SchemaOutOfDate", (error) => Effect.fail(new StoreUnavailable({ message: error.message }))),
      Spans.span("PetRepository.ready")
    )

    return PetRepository.of({ create, get, update, delete: remove, list, tags, inventory, ready })
  })

/** A PetRepository on the SqlClient in context (PostgreSQL server or embedded PGlite). */
export const layer = (
  options: Options
): Layer.Layer<PetRepository, Migrator.MigrationError | SqlError.SqlError, SqlClient.SqlClient> =>
  Layer.effect(PetRepository, make(options)).pipe(Layer.provide(Layer.merge(Migrations.layer, EventSequencer.layer)))
