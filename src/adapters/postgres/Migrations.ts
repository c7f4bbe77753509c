import { Context, Data, Duration, Effect, Exit, Layer } from "effect"
import { Migrator, SqlClient, type SqlError } from "effect/sql"
import * as SchemaMigrations from "./SchemaMigrations.ts"
import { isSchemaMissing, unavailableOrDie } from "./UnavailableOrDie.ts"

const migrationNumber = (id: number) => String(id).padStart(4, "0")

/**
 * The database does not record every migration this code knows: it was replaced under
 * the running instance (re-created empty, restored from an older dump), or emptied.
 */
export class SchemaOutOfDate extends Data.TaggedError("SchemaOutOfDate")<{
  /** The highest migration the database records; `undefined` when it records none. */
  readonly recorded: number | undefined
  /** The latest migration this code knows. */
  readonly latest: number
}> {
  override get message(): string {
    const recorded = this.recorded === undefined ? "no migration" : `migrations up to ${migrationNumber(this.recorded)}`
    return `the database schema is missing or out of date: it records ${recorded}, this release needs ${
      migrationNumber(this.latest)
    }`
  }
}

/**
 * The store's schema, migrated once when the layer is built: every SQL adapter requires
 * it, so the adapters built together (on one client, in one build) share one run, and
 * one adapter built alone still migrates.
 */
export class Migrations extends Context.Service<Migrations, {
  /** The migrations this build ran (those the database already recorded are not listed). */
  readonly applied: ReadonlyArray<readonly [id: number, name: string]>
  /**
   * Succeeds when the database records the latest migration this code knows, or a later
   * one (a newer release's instance migrated it first, as in a rolling deploy).
   */
  readonly check: Effect.Effect<void, SchemaOutOfDate | SqlError.SqlError>
}>()("animal-store/adapters/postgres/Migrations") {}

/**
 * What the layer does with the schema when it is built: apply the pending migrations, or
 * only check that there are none (a deployment that migrates before it rolls out). A
 * check that finds some fails with a MigrationError (kind BadState) saying `why` this
 * start does not migrate, caused by the SchemaOutOfDate.
 */
export const AtStart = Context.Reference<{ readonly _tag: "Apply" } | { readonly _tag: "Check"; readonly why: string }>(
  "animal-store/adapters/postgres/Migrations/AtStart",
  { defaultValue: () => ({ _tag: "Apply" }) }
)

/** One migration this code knows, and whether the database records it. */
export interface MigrationStatus {
  readonly id: number
  readonly name: string
  readonly applied: boolean
}

/** Every migration this code knows, in id order, with whether the database records it. */
export const status: Effect.Effect<ReadonlyArray<MigrationStatus>, Migrator.MigrationError | SqlError.SqlError, SqlClient.SqlClient> =
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const recorded = yield* sql<{ migration_id: number }>`SELECT migration_id FROM ${sql(SchemaMigrations.MIGRATIONS_TABLE)}`.pipe(
      Effect.map((rows) => new Set(rows.map((row) => row.migration_id))),
      // No table of migrations at all: a database nothing has migrated.
      Effect.catchIf(isSchemaMissing, () => Effect.succeed(new Set<number>()))
    )
    const known = yield* SchemaMigrations.loader
    return [...known].sort(([a], [b]) => a - b).map(([id, name]) => ({ id, name, applied: recorded.has(id) }))
  })

/**
 * Runs the store's pending migrations (SchemaMigrations.run) on the SqlClient in context,
 * once per build; with AtStart `Check`, runs none and fails unless none is pending.
 */
export const layer: Layer.Layer<Migrations, Migrator.MigrationError | SqlError.SqlError, SqlClient.SqlClient> =
  Layer.effect(
    Migrations,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const atStart = yield* AtStart
      const applied = atStart._tag === "Apply" ? yield* SchemaMigrations.run : []
      const latest = Math.max(...(yield* SchemaMigrations.loader).map(([id]) => id))
      const check = sql<{ recorded: number | null }>`
        SELECT max(migration_id) AS recorded FROM ${sql(SchemaMigrations.MIGRATIONS_TABLE)}`.pipe(
        Effect.map((rows) => rows[0]?.recorded ?? undefined),
        // No table of migrations at all: a database nothing has migrated.
        Effect.catchIf(isSchemaMissing, () => Effect.succeed(undefined)),
        Effect.flatMap((recorded) =>
          recorded !== undefined && recorded >= latest
            ? Effect.void
            : Effect.fail(new SchemaOutOfDate({ recorded, latest }))
        )
      )
      if (atStart._tag === "Check") {
        yield* Effect.catchTag(check, "SchemaOutOfDate", (cause) =>
          Effect.fail(new Migrator.MigrationError({ kind: "BadState", message: atStart.why, cause })))
      }
      return Migrations.of({ applied, check })
    })
  )

/** How {@link watch} checks. */
export interface WatchOptions {
  /** Time between checks. */
  readonly every: Duration.Input
  /** Longest one check may take; one that takes longer counts as the database being away. */
  readonly timeout: Duration.Input
}

/**
 * Checks the schema every `every` and fails with SchemaOutOfDate once two checks in a row
 * have found it out of date: a single sighting may be passing (a restore dropping the
 * table of migrations and creating it again). A database that does not answer is an
 * outage, not a lost schema (the requests say so with 503s), and starts the count again.
 */
export const watch = (options: WatchOptions): Effect.Effect<never, SchemaOutOfDate, Migrations> =>
  Effect.gen(function*() {
    const { check } = yield* Migrations
    // Through the store's guard: its deadline holds, and a check stuck on a silent
    // connection is abandoned, not waited for, when the watch is interrupted.
    const guarded = unavailableOrDie(Duration.fromInputUnsafe(options.timeout))(check)
    let sightings = 0
    while (true) {
      const exit = yield* Effect.exit(guarded)
      const lost = Exit.findErrorOption(exit)
      if (lost._tag === "Some" && lost.value._tag === "SchemaOutOfDate") {
        if (++sightings === 2) return yield* lost.value
      } else {
        sightings = 0
      }
      yield* Effect.sleep(options.every)
    }
  })
