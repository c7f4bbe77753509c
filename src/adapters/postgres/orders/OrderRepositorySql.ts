import { Duration, Effect, Layer, Result, Schema } from "effect"
import { type Migrator, SqlClient, type SqlError, SqlSchema, type Statement } from "effect/sql"
import { OrderNotFound, PetNotFound } from "../../../domain/Errors.ts"
import { ORDER_EVENT_TYPE, type EventType } from "../../../domain/events/EventType.ts"
import { Order, OrderQuantity } from "../../../domain/orders/Order.ts"
import { OrderEvent, type OrderTransitionEvent } from "../../../domain/orders/OrderEvent.ts"
import { OrderId } from "../../../domain/orders/OrderId.ts"
import type { OrderQuery } from "../../../domain/orders/OrderQuery.ts"
import { isComplete, OrderStatus } from "../../../domain/orders/OrderStatus.ts"
import { decide, decidePlace, ORDER_TRANSITIONS, ORDERABLE_PET_STATUS } from "../../../domain/orders/OrderTransitions.ts"
import { PetId } from "../../../domain/pets/PetId.ts"
import { PetStatus } from "../../../domain/pets/PetStatus.ts"
import { OrderRepository } from "../../../ports/orders/OrderRepository.ts"
import { recording } from "../events/EventAppend.ts"
import { EventSequencer } from "../events/EventSequencer.ts"
import * as Migrations from "../Migrations.ts"
import type { Options } from "../pets/PetRepositorySql.ts"
import { unavailableOrDie } from "../UnavailableOrDie.ts"
import * as Spans from "../../observability/Spans.ts"

const ORDER_COLUMNS = "id, pet_id, quantity, status, created_at, updated_at"

// to_char's pattern for an RFC 3339 UTC time with milliseconds, as Date#toISOString writes it.
const ISO_UTC = 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'

// Rows are decoded through the domain schemas, so a row no service could have written fails loudly.
const OrderRow = Schema.Struct({
  id: OrderId,
  pet_id: PetId,
  quantity: OrderQuantity,
  status: OrderStatus,
  created_at: Schema.DateTimeUtcFromDate,
  updated_at: Schema.DateTimeUtcFromDate
})

const toOrder = (row: typeof OrderRow.Type): Order =>
  new Order({
    id: row.id,
    petId: row.pet_id,
    quantity: row.quantity,
    status: row.status,
    complete: isComplete(row.status),
    createdAt: row.created_at,
    updatedAt: row.updated_at
  }, { disableChecks: true })

const LockedPet = Schema.Struct({ status: Schema.NullOr(PetStatus) })
const LockedOrder = Schema.Struct({ pet_id: PetId, status: OrderStatus })

// The table's place row: what a successful claim of an orderable pet writes.
const PLACE = ORDER_TRANSITIONS.find((row) => row.event === "place")!

/**
 * The keyset page query. Exported so a test can EXPLAIN exactly what the adapter runs:
 * `id > after ORDER BY id LIMIT n` walks the primary key, `(status, id)` with a status
 * filter and `(pet_id, id)` with a pet filter, so a deep page never reads the rows before it.
 */
export const pageStatement = (
  sql: SqlClient.SqlClient,
  page: { readonly after: bigint; readonly limit: number; readonly status: string | null; readonly petId: bigint | null }
) => {
  const conditions = [
    ...(page.petId === null ? [] : [sql`pet_id = ${page.petId}`]),
    ...(page.status === null ? [] : [sql`status = ${page.status}`]),
    sql`id > ${page.after}`
  ]
  return sql`SELECT ${sql.literal(ORDER_COLUMNS)} FROM orders
             WHERE ${sql.and(conditions)} ORDER BY id LIMIT ${page.limit}`
}

/**
 * Builds an OrderRepository on any PostgreSQL-speaking SqlClient, once the migrations
 * have run. Each change is one transaction that locks the row it decides on before
 * deciding, so any number of connections and instances on one database apply the
 * domain's table one change at a time per pet and per order:
 *
 * - `place` claims the pet with a conditional update (`status = 'available'`): of
 *   concurrent places for one pet, the first takes the row lock and the others, once it
 *   commits, re-check the condition and update nothing. Those then lock the pet and
 *   answer from its actual status through `decidePlace`.
 * - `transition` locks the order (`FOR UPDATE`), decides on its status, then writes
 *   the order and its pet. A second caller on the same order waits for the lock and
 *   decides on the status the first one left.
 *
 * Each change writes the order, its pet and their events in ONE statement
 * (recordingOrder): the order's event, then `pet.updated` when the pet's status changed
 * (the memory store records them in the same order); the sequencer is woken once the
 * transaction has committed. So a place is one statement when the pet is available
 * (two more when a cancel freed it in between), and a transition two: the lock and the
 * change. Lock order is pet then new order row in `place` and order then pet in
 * `transition`; they cannot deadlock, because `place` only claims a pet with no open
 * order, and a `transition` only writes a pet after finding its order open.
 */
export const make = (options: Options) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* Migrations.Migrations
    const sequencer = yield* EventSequencer
    const guard = unavailableOrDie(Duration.fromInputUnsafe(options.timeout))

    const lockPet = SqlSchema.findAll({
      Request: PetId,
      Result: LockedPet,
      execute: (petId) => sql`SELECT status FROM pets WHERE id = ${petId} AND deleted_at IS NULL FOR UPDATE`
    })

    // An order's change, its pet's and their events in ONE statement: an action's
    // transaction has no round trip for the outbox. `pet` is the pet's update, returning
    // the pet after it and its status before (`status_before`); `changed` is the order's
    // write (which may read `pet`), returning ORDER_COLUMNS. The events go in one INSERT,
    // sorted, so their `seq` (hence their ids) is drawn in that order: the order's event,
    // then `pet.updated` when the pet's status changed (approve leaves it pending: no pet
    // event).
    //
    // The data are orderData's and petUpdatedData's JSON written by the database (times as
    // DateTime.formatIso writes what the driver reads: UTC, milliseconds truncated; the
    // pet's keys in petData's order, a status-less pet without `status`; `changed` is
    // ["status"], the one field an order writes); the EventLog contract checks on every
    // store that they agree. `complete` is the domain's rule, applied to the status the
    // change writes.
    const recordingOrder = (
      type: EventType,
      status: OrderStatus,
      change: { readonly pet: Statement.Statement<unknown>; readonly changed: Statement.Statement<unknown> }
    ) =>
      recording((traceParent) =>
        sql`WITH pet AS (${change.pet}),
                 changed AS (${change.changed}),
                 recorded AS (
                   INSERT INTO events_pending (type, data, trace_parent)
                   SELECT type, data, ${traceParent} FROM (
                     SELECT 1 AS position, ${type}::text AS type, json_build_object(
                       'id', id, 'petId', pet_id, 'quantity', quantity, 'status', status,
                       'complete', ${isComplete(status)}::boolean,
                       'createdAt', to_char(created_at AT TIME ZONE 'UTC', ${ISO_UTC}),
                       'updatedAt', to_char(updated_at AT TIME ZONE 'UTC', ${ISO_UTC})) AS data
                     FROM changed
                     UNION ALL
                     SELECT 2, 'pet.updated', json_strip_nulls(json_build_object(
                       'id', id, 'name', name, 'categoryId', category_id, 'status', status, 'tags', tags,
                       'version', version, 'changed', json_build_array('status')))
                     FROM pet WHERE status IS DISTINCT FROM status_before
                   ) AS appended ORDER BY position)
            SELECT ${sql.literal(ORDER_COLUMNS)} FROM changed`
      )

    // Claims the pet if it is available and orders it: no row when it is not available
    // (or does not exist) as the statement sees it.
    const placeOrder = SqlSchema.findAll({
      Request: PetId,
      Result: OrderRow,
      execute: (petId) =>
        recordingOrder(ORDER_EVENT_TYPE.place, PLACE.order, {
          pet: sql`UPDATE pets SET status = ${PLACE.pet}, version = version + 1
                   WHERE id = ${petId} AND status = ${ORDERABLE_PET_STATUS} AND deleted_at IS NULL
                   RETURNING id, name, category_id, status, tags, version, ${ORDERABLE_PET_STATUS}::text AS status_before`,
          changed: sql`INSERT INTO orders (pet_id, quantity, status) SELECT id, 1, ${PLACE.order} FROM pet
                       RETURNING ${sql.literal(ORDER_COLUMNS)}`
        })
    })

    const lockOrder = SqlSchema.findAll({
      Request: OrderId,
      Result: LockedOrder,
      execute: (id) => sql`SELECT pet_id, status FROM orders WHERE id = ${id} FOR UPDATE`
    })

    // The order, locked by the caller, and its pet. The pet's status before is read from
    // the statement's snapshot (`before`): while the order is open no other change can
    // write it (a patch of the status and a retirement are refused, a place needs the pet
    // available), and its other fields are returned as the update left them.
    const updateOrder = SqlSchema.findOne({
      Request: Schema.Struct({ id: OrderId, status: OrderStatus, event: OrderEvent, petId: PetId, petStatus: PetStatus }),
      Result: OrderRow,
      execute: ({ event, id, petId, petStatus, status }) =>
        recordingOrder(ORDER_EVENT_TYPE[event], status, {
          // A new version only when the status changes: an approval leaves the pet as it was.
          pet: sql`UPDATE pets SET status = ${petStatus},
                                   version = pets.version + (before.status IS DISTINCT FROM ${petStatus})::int
                   FROM pets AS before WHERE pets.id = ${petId} AND before.id = pets.id
                   RETURNING pets.id, pets.name, pets.category_id, pets.status, pets.tags, pets.version, before.status AS status_before`,
          changed: sql`UPDATE orders SET status = ${status}, updated_at = now() WHERE id = ${id}
                       RETURNING ${sql.literal(ORDER_COLUMNS)}`
        })
    })

    const byId = SqlSchema.findAll({
      Request: OrderId,
      Result: OrderRow,
      execute: (id) =>
        sql`SELECT ${sql.literal(ORDER_COLUMNS)} FROM orders WHERE id = ${id}`
    })

    const page = SqlSchema.findAll({
      Request: Schema.Struct({
        limit: Schema.Number,
        status: Schema.NullOr(Schema.String),
        petId: Schema.NullOr(Schema.BigInt),
        after: Schema.BigInt
      }),
      Result: OrderRow,
      execute: (page) => pageStatement(sql, page)
    })

    const place = Spans.method("OrderRepository.place", (petId: PetId) =>
      sql.withTransaction(Effect.gen(function*() {
        const placed = (yield* placeOrder(petId))[0]
        if (placed !== undefined) return toOrder(placed)
        // Not available when the claim looked. Lock the pet so that the status we answer
        // from stays true until we answer.
        const pet = (yield* lockPet(petId))[0]
        if (pet === undefined) return yield* new PetNotFound({ id: petId })
        const decision = decidePlace(petId, pet.status ?? undefined)
        if (Result.isFailure(decision)) return yield* decision.failure
        // Made available again in between (its order cancelled): the pet is ours now, and
        // locked, so the claim sees it available.
        const claimed = (yield* placeOrder(petId))[0]
        if (claimed === undefined) return yield* Effect.die(new Error(`pet ${petId} is locked and available, yet was not claimed`))
        return toOrder(claimed)
      })).pipe(Effect.tap(() => sequencer.wake), guard)
    )

    const get = Spans.method("OrderRepository.get", (id: OrderId) =>
      Effect.flatMap(guard(byId(id)), (rows) =>
        rows[0] === undefined ? Effect.fail(new OrderNotFound({ id })) : Effect.succeed(toOrder(rows[0]))))

    const list = Spans.method("OrderRepository.list", (query: OrderQuery) =>
      page({ limit: query.limit, status: query.status ?? null, petId: query.petId ?? null, after: query.after ?? 0n })
        .pipe(Effect.map((rows) => rows.map(toOrder)), guard)
    )

    const transition = Spans.method("OrderRepository.transition", (id: OrderId, event: OrderTransitionEvent) =>
      sql.withTransaction(Effect.gen(function*() {
        const order = (yield* lockOrder(id))[0]
        if (order === undefined) return yield* new OrderNotFound({ id })
        const decision = decide(id, order.status, event)
        if (Result.isFailure(decision)) return yield* decision.failure
        const updated = yield* updateOrder({
          id,
          status: decision.success.order,
          event,
          petId: order.pet_id,
          petStatus: decision.success.pet
        })
        return toOrder(updated)
      })).pipe(Effect.tap(() => sequencer.wake), Effect.catchTag("NoSuchElementError", Effect.die), guard)
    )

    return OrderRepository.of({ place, get, list, transition })
  })

/**
 * An OrderRepository on the SqlClient in context (PostgreSQL server or embedded PGlite),
 * over the same tables as PetRepositorySql: provide both from one client.
 */
export const layer = (
  options: Options
): Layer.Layer<OrderRepository, Migrator.MigrationError | SqlError.SqlError, SqlClient.SqlClient> =>
  Layer.effect(OrderRepository, make(options)).pipe(Layer.provide(Layer.merge(Migrations.layer, EventSequencer.layer)))
