import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { CategoryId } from "../../../../src/domain/pets/CategoryId.ts"
import type { EventId } from "../../../../src/domain/events/EventId.ts"
import type { StoreEvent } from "../../../../src/domain/events/StoreEvent.ts"
import { NewPet } from "../../../../src/domain/pets/NewPet.ts"
import { PetName } from "../../../../src/domain/pets/PetName.ts"
import { EventLog } from "../../../../src/ports/events/EventLog.ts"
import { OrderRepository } from "../../../../src/ports/orders/OrderRepository.ts"
import { PetRepository } from "../../../../src/ports/pets/PetRepository.ts"
import * as EventLogSql from "../../../../src/adapters/postgres/events/EventLogSql.ts"
import { EventSequencer } from "../../../../src/adapters/postgres/events/EventSequencer.ts"
import * as OrderRepositorySql from "../../../../src/adapters/postgres/orders/OrderRepositorySql.ts"
import * as PetRepositorySql from "../../../../src/adapters/postgres/pets/PetRepositorySql.ts"
import { layerFreshDatabase, postgresAvailable } from "../TestDatabase.ts"

const options = { timeout: "10 seconds" } as const

// Sized so that sequencers without the lock fail (a reader skips an event) in most rounds.
const WRITERS = 16
const CHANGES_PER_WRITER = 60
// Half of the changes are creates (pet.created), half places (order.placed and pet.updated).
const EVENTS_PER_WRITER = CHANGES_PER_WRITER / 2 * 3
const READERS = 12
const ROUNDS = 3

const pet = new NewPet({ name: PetName.make("sequenced"), categoryId: CategoryId.make(1n), status: "available" })

describe.skipIf(!postgresAvailable)("EventSequencer on a PostgreSQL server", () => {
  layer(
    Layer.mergeAll(PetRepositorySql.layer(options), OrderRepositorySql.layer(options), EventLogSql.layer(options)).pipe(
      Layer.provideMerge(layerFreshDatabase({ maxConnections: 30 }))
    ),
    { timeout: 120_000, excludeTestServices: true }
  )("concurrent sequencers", (it) => {
    // Every page runs a sequencer when something is unnumbered, so READERS readers and the
    // background fiber number concurrently, on their own connections, while WRITERS
    // writers commit on theirs.
    it.effect("readers paging during concurrent writes never see an id below one seen, and every event is numbered once", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const log = yield* EventLog
        const pets = yield* PetRepository
        const orders = yield* OrderRepository
        const round = Effect.gen(function*() {
          const start = yield* log.latest
          let writing = true
          const reader = Effect.gen(function*() {
            const seen: Array<EventId> = []
            let from: EventId | 0n = start
            while (true) {
              const done = !writing
              const page: ReadonlyArray<StoreEvent> = yield* log.page({ after: from, limit: 20 })
              for (const event of page) {
                // A number below one already returned would be one this reader skipped.
                assert.isTrue(event.id > from, `event ${event.id} after ${from}`)
                from = event.id
                seen.push(event.id)
              }
              if (page.length === 0 && done) return seen
            }
          })
          const writer = Effect.forEach(Array.from({ length: CHANGES_PER_WRITER / 2 }), () =>
            Effect.gen(function*() {
              const created = yield* pets.create(pet)
              yield* orders.place(created.id)
            }))
          const writers = Effect.all(Array.from({ length: WRITERS }, () => writer), { concurrency: "unbounded" }).pipe(
            Effect.ensuring(Effect.sync(() => writing = false))
          )
          const [, ...seen] = yield* Effect.all(
            [writers, ...Array.from({ length: READERS }, () => reader)],
            { concurrency: "unbounded" }
          )
          // Each event's data holds its pet's or order's id: one row per event, numbered once.
          const [counts] = yield* sql<{ numbered: number; unnumbered: number; distinct_data: number }>`
            SELECT count(*) FILTER (WHERE id > ${start})::int AS numbered,
                   (SELECT count(*) FROM events_pending)::int AS unnumbered,
                   count(DISTINCT (type, data::text)) FILTER (WHERE id > ${start})::int AS distinct_data
            FROM events`
          assert.deepStrictEqual(counts, {
            numbered: WRITERS * EVENTS_PER_WRITER,
            unnumbered: 0,
            distinct_data: WRITERS * EVENTS_PER_WRITER
          })
          const all = (yield* sql<{ id: string }>`SELECT id::text AS id FROM events WHERE id > ${start} ORDER BY events.id`)
            .map((row) => BigInt(row.id))
          for (const ids of seen) assert.deepStrictEqual(ids, all)
        })
        for (let i = 0; i < ROUNDS; i++) yield* round
      }))
  })

  layer(EventSequencer.layer.pipe(Layer.provideMerge(layerFreshDatabase({ maxConnections: 2 }))), {
    timeout: 30_000,
    excludeTestServices: true
  })(
    "the backstop",
    (it) => {
      it.effect("numbers an event whose writer never woke a sequencer (killed after its commit) within seconds", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          yield* sql`INSERT INTO events_pending (type, data) VALUES ('pet.deleted', '{"id": 1}')`
          const numbered = sql<{ id: string }>`SELECT id::text AS id FROM events`.pipe(
            Effect.map((rows) => rows.length === 1 && BigInt(rows[0]!.id) > 0n),
            Effect.repeat({ until: (done) => done, schedule: Schedule.spaced("100 millis") }),
            Effect.timeoutOption("5 seconds")
          )
          assert.isTrue((yield* numbered)._tag === "Some")
        }))

      it.effect("numbers, in insertion order, events an instance of the release before 0015 wrote into events (a rolling upgrade)", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const sequencer = yield* EventSequencer
          yield* sequencer.run
          const [before] = yield* sql<{ id: string }>`SELECT coalesce(max(id), 0)::text AS id FROM events`
          yield* sql`INSERT INTO events_pending (type, data) VALUES ('pet.deleted', '{"id": 2}')`
          yield* sql`INSERT INTO events (type, data) VALUES ('pet.deleted', '{"id": 3}')`
          yield* sql`INSERT INTO events_pending (type, data) VALUES ('pet.deleted', '{"id": 4}')`
          yield* sequencer.run
          const rows = yield* sql<{ data: string }>`SELECT data::text AS data FROM events WHERE id > ${BigInt(before!.id)} ORDER BY id`
          assert.deepStrictEqual(rows.map((row) => JSON.parse(row.data).id), [2, 3, 4])
          const [left] = yield* sql<{ n: number }>`
            SELECT (SELECT count(*) FROM events_pending)::int + (SELECT count(*) FROM events WHERE id < 0)::int AS n`
          assert.strictEqual(left?.n, 0)
        }))
    }
  )

  layer(EventSequencer.layer.pipe(Layer.provideMerge(layerFreshDatabase())), { timeout: 60_000, excludeTestServices: true })(
    "a run with nothing to number",
    (it) => {
      // Without statistics (autovacuum off, no ANALYZE), as on PGlite before its first
      // maintenance pass: 0015's check was planned as a scan of the whole table.
      it.effect("reads an index entry of events, not the table, before any statistics", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          yield* sql`ALTER TABLE events SET (autovacuum_enabled = false)`
          yield* sql`INSERT INTO events (id, type, data) SELECT g, 'pet.deleted', '{}' FROM generate_series(1, 5000) g`
          // The counts of this backend not yet flushed, read before and after the run.
          const scans = sql<{ seq: number; idx: number }>`
            SELECT seq_scan::int AS seq, idx_scan::int AS idx FROM pg_stat_xact_user_tables WHERE relname = 'events'`
          const [before, after] = yield* sql.withTransaction(Effect.all([
            scans,
            Effect.andThen(sql`SELECT events_sequence('animal_store_test')`, scans)
          ]))
          assert.deepStrictEqual(
            { seq: after![0]!.seq - before![0]!.seq, idx: after![0]!.idx - before![0]!.idx },
            { seq: 0, idx: 1 }
          )
        }))
    }
  )
})
