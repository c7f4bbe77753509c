/**
 * Child process: what the outbox write costs the changes that make events (issue 23's
 * target: a create or an order action at most 15% slower with it).
 *
 * `clients` concurrent fibers each loop create a pet, place an order for it, approve the
 * order, over one client configured as the service's (PostgreSQL: PostgresClient, a pool
 * of 10; embedded: EmbeddedDatabase, one multiplexed connection), with one webhook
 * subscription row in the table (no dispatcher runs: it reads the feed outside the
 * writes' transactions, and the webhooks section measures it). Variants, in interleaved
 * rounds (the order reversed every other round):
 *
 * - without: the SQL adapters' statements, without the event insert;
 * - with: the same statements with the event, as the adapters write it (in the change's
 *   own statement: the CTEs copied from PetRepositorySql and OrderRepositorySql), and
 *   the EventSequencer woken after each commit, numbering the events meanwhile;
 * - diagnostics, to tell the parts apart: with, no wake (the row alone; the sequencer's
 *   1 s backstop numbers it); numbered at COMMIT: the mechanism before the sequencer,
 *   into a copy of `events` with migration 0010's trigger (its own advisory lock key)
 *   and a pg_notify in each writer's transaction;
 * - repository: PetRepositorySql and OrderRepositorySql themselves (decoding, spans,
 *   the deadline and the wake on top of "with").
 *
 * On PostgreSQL a separate connection samples pg_stat_activity every 20 ms during each
 * round: what the pool's backends were waiting on, per variant.
 *
 * Usage (from bench/run.ts): node bench/outbox.ts '<json OutboxArgs>'
 * Writes an OutboxResult as JSON to args.resultPath.
 */
import { Duration, Effect, Layer, Redacted, Schema } from "effect"
import { SqlClient, type Statement } from "effect/sql"
import { writeFileSync } from "node:fs"
import pg from "pg"
import * as EmbeddedDatabase from "../src/adapters/embedded/EmbeddedDatabase.ts"
import { EVENTS_CHANNEL, EventSequencer } from "../src/adapters/postgres/events/EventSequencer.ts"
import * as Migrations from "../src/adapters/postgres/Migrations.ts"
import * as OrderRepositorySql from "../src/adapters/postgres/orders/OrderRepositorySql.ts"
import * as PetRepositorySql from "../src/adapters/postgres/pets/PetRepositorySql.ts"
import * as PostgresClient from "../src/adapters/postgres/PostgresClient.ts"
import { EventType } from "../src/domain/events/EventType.ts"
import { OrderId } from "../src/domain/orders/OrderId.ts"
import { NewPet } from "../src/domain/pets/NewPet.ts"
import { PetId } from "../src/domain/pets/PetId.ts"
import { runChildMain } from "./child-main.ts"
import { median, postgresCpuMillis } from "./lib.ts"

export interface OutboxArgs {
  readonly store: "embedded" | "postgres"
  readonly resultPath: string
  readonly clients: number
  /** Measured seconds per variant and round. */
  readonly seconds: number
  readonly rounds: number
  /** postgres: a fresh database (created and dropped by the parent). */
  readonly url?: string
  /** embedded: an empty data directory. */
  readonly dataDir?: string
}

export type OutboxVariant =
  | "without"
  | "with"
  | "with, no wake"
  | "numbered at COMMIT (0010)"
  | "repository"

export interface OutboxRow {
  readonly store: string
  readonly variant: OutboxVariant
  /** Median over rounds of iterations (create + place + approve) per second. */
  readonly perSec: number
  /** Median over rounds of this variant's iterations/s / "without"'s in the same round. */
  readonly ratio: number
  readonly ratioMin: number
  readonly ratioMax: number
  /** Mean latency of each action over every round, in milliseconds. */
  readonly createMs: number
  readonly placeMs: number
  readonly approveMs: number
  /** CPU per iteration, in microseconds, over every round: this process (with PGlite, the database too) ... */
  readonly processCpuUs: number
  /** ... and PostgreSQL's server processes (postgres only). */
  readonly databaseCpuUs?: number
  /** PostgreSQL: of the samples of the pool's backends, the share in each state / wait ("state: type/event"). */
  readonly waits?: Readonly<Record<string, number>>
}

export interface OutboxResult {
  readonly store: string
  readonly rows: ReadonlyArray<OutboxRow>
  /** Rows in `events` after the run, and how many of them still wait for their number (should be 0). */
  readonly events: number
  readonly unnumbered: number
}

const args = JSON.parse(process.argv[2] ?? "{}") as OutboxArgs

/** How a variant records a change's event, if at all. */
type Recording = "none" | "outbox" | "no wake" | "at commit"

// Columns the adapters read back.
const PET_COLUMNS = "id, name, category_id, status, version"
const ORDER_COLUMNS = "id, pet_id, quantity, status, created_at, updated_at"
const ISO_UTC = 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'

interface OrderRow {
  readonly id: unknown
}

interface Actions {
  readonly create: (client: number) => Effect.Effect<bigint, unknown>
  readonly place: (petId: bigint) => Effect.Effect<bigint, unknown>
  readonly approve: (orderId: bigint) => Effect.Effect<void, unknown>
}

/** The adapters' statements sent directly, recording each change's event as `recording` says. */
const statements = (sql: SqlClient.SqlClient, sequencer: EventSequencer["Service"], recording: Recording): Actions => {
  // The adapters' outbox table (migration 0015); the diagnostic's copy of the 0010 mechanism.
  const table = recording === "at commit" ? "events_at_commit" : "events_pending"
  const notify = recording === "at commit"
  // OrderRepositorySql's recordingOrder: the order's change and its event in one statement.
  const recordingOrder = (type: EventType, complete: boolean, change: Statement.Statement<OrderRow>) =>
    recording === "none" ? change : sql<OrderRow>`
      WITH changed AS (${change}),
           recorded AS (
             INSERT INTO ${sql(table)} (type, data, trace_parent)
             SELECT ${type}, json_build_object(
               'id', id, 'petId', pet_id, 'quantity', quantity, 'status', status, 'complete', ${complete}::boolean,
               'createdAt', to_char(created_at AT TIME ZONE 'UTC', ${ISO_UTC}),
               'updatedAt', to_char(updated_at AT TIME ZONE 'UTC', ${ISO_UTC})), ${null}
             FROM ${notify ? sql`changed, pg_notify(${EVENTS_CHANNEL}, '')` : sql`changed`})
      SELECT ${sql.literal(ORDER_COLUMNS)} FROM changed`
  // As the repositories do: after the transaction commits.
  const committed = recording === "outbox" ? sequencer.wake : Effect.void
  const insertPet = (client: number) =>
    sql`INSERT INTO pets (name, category_id, status) VALUES (${`outbox ${client}`}, ${1n}, 'available')
        RETURNING ${sql.literal(PET_COLUMNS)}`
  // PetRepositorySql's recordingCreate: the pet and its event in one statement.
  const createStatement = (client: number) =>
    recording === "none"
      ? insertPet(client)
      : sql`WITH inserted AS (${insertPet(client)}),
                 recorded AS (
                   INSERT INTO ${sql(table)} (type, data, trace_parent)
                   SELECT 'pet.created', json_strip_nulls(json_build_object(
                     'id', id, 'name', name, 'categoryId', category_id, 'status', status)), ${null}
                   FROM ${notify ? sql`inserted, pg_notify(${EVENTS_CHANNEL}, '')` : sql`inserted`})
            SELECT ${sql.literal(PET_COLUMNS)} FROM inserted`
  return {
    create: (client) =>
      Effect.map(createStatement(client), (rows) => BigInt(String((rows[0] as { readonly id: unknown }).id))).pipe(
        Effect.tap(() => committed)
      ),
    place: (petId) =>
      sql.withTransaction(Effect.gen(function*() {
        const claimed = yield* sql`UPDATE pets SET status = 'pending', version = version + 1
          WHERE id = ${petId} AND status = 'available' AND deleted_at IS NULL RETURNING id`
        if (claimed.length === 0) return yield* Effect.die(new Error(`pet ${petId} was not available`))
        const [order] = yield* recordingOrder(
          "order.placed",
          false,
          sql`INSERT INTO orders (pet_id, quantity, status) VALUES (${petId}, 1, 'placed')
              RETURNING ${sql.literal(ORDER_COLUMNS)}`
        )
        return BigInt(String(order!.id))
      })).pipe(Effect.tap(() => committed)),
    approve: (orderId) =>
      sql.withTransaction(Effect.gen(function*() {
        const [locked] = yield* sql<{ readonly pet_id: unknown; readonly status: string }>`
          SELECT pet_id, status FROM orders WHERE id = ${orderId} FOR UPDATE`
        if (locked?.status !== "placed") return yield* Effect.die(new Error(`order ${orderId} was not placed`))
        yield* recordingOrder(
          "order.approved",
          false,
          sql`UPDATE orders SET status = 'approved', updated_at = now() WHERE id = ${orderId}
              RETURNING ${sql.literal(ORDER_COLUMNS)}`
        )
        yield* sql`UPDATE pets SET status = 'pending', version = version + 1 WHERE id = ${BigInt(String(locked.pet_id))}`
      })).pipe(Effect.tap(() => committed))
  }
}

const decodeNewPet = Schema.decodeUnknownSync(NewPet)

const repositories = Effect.gen(function*() {
  const options = { timeout: "5 seconds" } as const
  const pets = yield* PetRepositorySql.make(options)
  const orders = yield* OrderRepositorySql.make(options)
  const actions: Actions = {
    create: (client) =>
      Effect.map(
        pets.create(decodeNewPet({ name: `outbox ${client}`, categoryId: 1n, status: "available" })),
        (pet) => pet.id
      ),
    place: (petId) => Effect.map(orders.place(PetId.make(petId)), (order) => order.id),
    approve: (orderId) => Effect.asVoid(orders.transition(OrderId.make(orderId), "approve"))
  }
  return actions
})

interface Round {
  readonly perSec: number
  readonly createMs: number
  readonly placeMs: number
  readonly approveMs: number
  readonly iterations: number
  /** CPU spent during the round, in milliseconds: this process, and PostgreSQL's processes. */
  readonly processCpuMs: number
  readonly databaseCpuMs: number
  /** Samples of the pool's backends, by "state: wait". */
  readonly waits: Record<string, number>
}

/** PostgreSQL: one "state: wait" per backend of this database but the sampler's own. */
type Sampler = Effect.Effect<ReadonlyArray<string>>

const waitSampler = (url: string) =>
  Effect.map(
    Effect.acquireRelease(
      Effect.promise(async () => {
        const client = new pg.Client({ connectionString: url })
        await client.connect()
        return client
      }),
      (client) => Effect.promise(() => client.end())
    ),
    (client): Sampler =>
      Effect.promise(async () => {
        const result = await client.query<{ readonly key: string }>(
          `SELECT state || ': ' || coalesce(wait_event_type || '/' || wait_event, 'on CPU') AS key
           FROM pg_stat_activity
           WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`
        )
        return result.rows.map((row) => row.key)
      })
  )

/** `clients` fibers looping create + place + approve for `seconds`, sampled meanwhile by `sampler`. */
const run = (actions: Actions, seconds: number, sampler: Sampler | undefined) =>
  Effect.gen(function*() {
    const waits: Record<string, number> = {}
    const spent = { create: 0, place: 0, approve: 0 }
    let iterations = 0
    const processBefore = process.cpuUsage()
    const databaseBefore = postgresCpuMillis()
    const until = performance.now() + seconds * 1000
    const timed = <A>(action: keyof typeof spent, effect: Effect.Effect<A, unknown>) =>
      Effect.suspend(() => {
        const started = performance.now()
        return Effect.tap(effect, () =>
          Effect.sync(() => {
            spent[action] += performance.now() - started
          }))
      })
    const sampling = sampler === undefined ? Effect.void : Effect.whileLoop({
      while: () => performance.now() < until,
      body: () =>
        Effect.flatMap(sampler, (keys) => {
          for (const key of keys) waits[key] = (waits[key] ?? 0) + 1
          return Effect.sleep("20 millis")
        }),
      step: () => {}
    })
    const clients = Effect.forEach(
      Array.from({ length: args.clients }, (_, client) => client),
      (client) =>
        Effect.whileLoop({
          while: () => performance.now() < until,
          body: () =>
            Effect.gen(function*() {
              const petId = yield* timed("create", actions.create(client))
              const orderId = yield* timed("place", actions.place(petId))
              yield* timed("approve", actions.approve(orderId))
              iterations++
            }),
          step: () => {}
        }),
      { concurrency: "unbounded", discard: true }
    )
    yield* Effect.all([clients, sampling], { concurrency: 2, discard: true })
    const processUsed = process.cpuUsage(processBefore)
    const per = (ms: number) => iterations === 0 ? Number.NaN : ms / iterations
    const round: Round = {
      perSec: iterations / seconds,
      createMs: per(spent.create),
      placeMs: per(spent.place),
      approveMs: per(spent.approve),
      iterations,
      processCpuMs: (processUsed.user + processUsed.system) / 1000,
      databaseCpuMs: postgresCpuMillis() - databaseBefore,
      waits
    }
    return round
  })

const bench = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const repository = yield* repositories
  const sequencer = yield* EventSequencer
  const sampler = args.store === "postgres" ? yield* waitSampler(args.url!) : undefined
  // The diagnostic's copy of `events` (the same columns, defaults and indexes), numbered
  // at COMMIT by migration 0010's trigger, under a lock key of its own.
  yield* sql`CREATE TABLE events_at_commit (LIKE events INCLUDING DEFAULTS INCLUDING INDEXES)`
  yield* sql`
    CREATE FUNCTION events_at_commit_number() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_advisory_xact_lock(25974, 2);
      UPDATE events_at_commit SET id = nextval('events_id'), occurred_at = clock_timestamp() WHERE id = NEW.id;
      RETURN NULL;
    END
    $$
  `
  yield* sql`
    CREATE CONSTRAINT TRIGGER events_at_commit_number AFTER INSERT ON events_at_commit
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION events_at_commit_number()
  `
  yield* sql`INSERT INTO webhooks (url, types, created_at, secret)
             VALUES ('http://127.0.0.1:9/hook', ${[...EventType.literals]}, now(), 'whsec_outboxbench0123456789abcdef')`
  const variants: ReadonlyArray<readonly [OutboxVariant, Actions]> = [
    ["without", statements(sql, sequencer, "none")],
    ["with", statements(sql, sequencer, "outbox")],
    ["with, no wake", statements(sql, sequencer, "no wake")],
    ["numbered at COMMIT (0010)", statements(sql, sequencer, "at commit")],
    ["repository", repository]
  ]
  for (const [, actions] of variants) yield* run(actions, Math.min(1, args.seconds), undefined)
  const rounds = new Map<OutboxVariant, Array<Round>>(variants.map(([variant]) => [variant, []]))
  for (let round = 0; round < args.rounds; round++) {
    const order = round % 2 === 0 ? variants : [...variants].reverse()
    for (const [variant, actions] of order) rounds.get(variant)!.push(yield* run(actions, args.seconds, sampler))
  }
  const without = rounds.get("without")!
  const mean = (values: ReadonlyArray<Round>, pick: (round: Round) => number) => {
    const total = values.reduce((sum, round) => sum + round.iterations, 0)
    return values.reduce((sum, round) => sum + pick(round) * round.iterations, 0) / total
  }
  const cpuPerIteration = (values: ReadonlyArray<Round>, pick: (round: Round) => number) =>
    (values.reduce((sum, round) => sum + pick(round), 0) * 1000) / values.reduce((sum, round) => sum + round.iterations, 0)
  const rows = variants.map(([variant]): OutboxRow => {
    const mine = rounds.get(variant)!
    const ratios = mine.map((round, i) => round.perSec / without[i]!.perSec)
    const waits: Record<string, number> = {}
    for (const round of mine) for (const [key, count] of Object.entries(round.waits)) waits[key] = (waits[key] ?? 0) + count
    const samples = Object.values(waits).reduce((sum, count) => sum + count, 0)
    return {
      store: args.store,
      variant,
      perSec: median(mine.map((round) => round.perSec)),
      ratio: median(ratios),
      ratioMin: Math.min(...ratios),
      ratioMax: Math.max(...ratios),
      createMs: mean(mine, (round) => round.createMs),
      placeMs: mean(mine, (round) => round.placeMs),
      approveMs: mean(mine, (round) => round.approveMs),
      processCpuUs: cpuPerIteration(mine, (round) => round.processCpuMs),
      ...(args.store === "postgres" ? { databaseCpuUs: cpuPerIteration(mine, (round) => round.databaseCpuMs) } : {}),
      ...(samples === 0 ? {} : { waits: Object.fromEntries(Object.entries(waits).map(([key, count]) => [key, count / samples])) })
    }
  })
  yield* sequencer.run
  const [counts] = yield* sql<{ readonly events: unknown; readonly unnumbered: unknown }>`
    SELECT count(*) AS events, (SELECT count(*) FROM events_pending) AS unnumbered FROM events`
  const result: OutboxResult = {
    store: args.store,
    rows,
    events: Number(counts?.events),
    unnumbered: Number(counts?.unnumbered)
  }
  writeFileSync(args.resultPath, JSON.stringify(result, null, 2))
}).pipe(Effect.provide(Layer.merge(Migrations.layer, EventSequencer.layer)))

const client = (): Layer.Layer<SqlClient.SqlClient, unknown, never> => {
  switch (args.store) {
    case "embedded":
      if (args.dataDir === undefined) throw new Error("embedded needs dataDir")
      return EmbeddedDatabase.layer({ dataDir: args.dataDir })
    case "postgres":
      if (args.url === undefined) throw new Error("postgres needs url")
      // The service's defaults: DATABASE_POOL_SIZE 10, DATABASE_STATEMENT_TIMEOUT 5 s.
      return PostgresClient.layer({
        url: Redacted.make(args.url),
        poolSize: 10,
        statementTimeout: Duration.seconds(5)
      })
  }
}

runChildMain(`outbox bench (${args.store})`, bench.pipe(Effect.provide(client()), Effect.scoped))
