import { Duration, Effect, Layer, Result, Schedule, Schema, type Scope } from "effect"
import { type Migrator, SqlClient, SqlError, SqlSchema } from "effect/sql"
import type { StoreUnavailable } from "../../../domain/Errors.ts"
import { IdempotencyKeyInUse } from "../../../domain/idempotency/IdempotencyErrors.ts"
import { type IdempotentRequest, StoredResponse } from "../../../domain/idempotency/IdempotentRequest.ts"
import { replay } from "../../../domain/idempotency/KeptAnswer.ts"
import { IdempotentCreates } from "../../../ports/idempotency/IdempotentCreates.ts"
import { type IdempotencyOptions, keyIdentity, resolve } from "../../idempotency/IdempotencyOptions.ts"
import { InFlightKeys } from "../../idempotency/InFlightKeys.ts"
import { EventSequencer } from "../events/EventSequencer.ts"
import * as Migrations from "../Migrations.ts"
import type { Options as RepositoryOptions } from "../pets/PetRepositorySql.ts"
import { unavailableOrDie } from "../UnavailableOrDie.ts"
import * as Spans from "../../observability/Spans.ts"

/** Tuning for the SQL-backed IdempotentCreates. */
export interface Options extends RepositoryOptions, IdempotencyOptions {
  /** How often expired keys are deleted (they are ignored from the moment they expire). Default: 1 hour. */
  readonly sweepEvery?: Duration.Input | undefined
}

const KeptRow = Schema.Struct({
  fingerprint: Schema.String,
  status: Schema.Int,
  body: Schema.String,
  location: Schema.NullOr(Schema.String),
  etag: Schema.NullOr(Schema.String)
})

const isLockTimeout = (error: unknown) => SqlError.isSqlError(error) && error.reason._tag === "LockTimeoutError"

/**
 * Builds IdempotentCreates on any PostgreSQL-speaking SqlClient, once the migrations
 * have run. The create runs inside this adapter's transaction: PetRepositorySql and
 * OrderRepositorySql on the same client join it (an order's own transaction becomes a
 * savepoint), so the created row and its kept answer commit together.
 *
 * One request per key at a time, across connections and instances: the transaction
 * first takes a transaction-scoped advisory lock on a hash of (key, keyId), waiting at
 * most `inProgressWait` (`lock_timeout`) for a request holding it to commit; it then
 * reads the key's live row, which that request has just written, and replays it. A wait
 * that runs out is IdempotencyKeyInUse. Unrelated keys that share a hash only wait for
 * each other briefly. Within one process InFlightKeys makes duplicates wait before they
 * take a connection, which the embedded store's single connection needs.
 */
export const make = (options: Options): Effect.Effect<
  IdempotentCreates["Service"],
  never,
  SqlClient.SqlClient | Migrations.Migrations | EventSequencer | Scope.Scope
> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* Migrations.Migrations
    const sequencer = yield* EventSequencer
    const guard = unavailableOrDie(Duration.fromInputUnsafe(options.timeout))
    const { inProgressWait, retention } = resolve(options)
    const inFlight = new InFlightKeys(inProgressWait)
    const retentionSeconds = Duration.toSeconds(retention)
    const lockTimeout = `${Math.max(1, Math.round(Duration.toMillis(inProgressWait)))}ms`

    // The lock's id is a hash of the key seeded with a hash of the key id (text cannot hold
    // the NUL that separates them in process). set_config is part of an argument of the
    // lock, so the bound is in force before the lock is requested, in one round trip. It
    // lasts to the end of the transaction, so it is reset right after: the create's own row
    // locks wait as long as they always have.
    const lockKey = (request: IdempotentRequest) =>
      sql`SELECT pg_advisory_xact_lock(hashtextextended(
            ${request.key},
            hashtextextended(${request.keyId}, 0) + 0 * length(set_config('lock_timeout', ${lockTimeout}, true))))`.pipe(
        Effect.catchIf(isLockTimeout, () => Effect.fail(new IdempotencyKeyInUse())),
        Effect.andThen(sql`SET LOCAL lock_timeout TO DEFAULT`)
      )

    const find = SqlSchema.findAll({
      Request: Schema.Struct({ keyId: Schema.String, key: Schema.String }),
      Result: KeptRow,
      execute: ({ key, keyId }) =>
        sql`SELECT fingerprint, status, body, location, etag FROM idempotency_keys
            WHERE key_id = ${keyId} AND idempotency_key = ${key}
              AND created_at > now() - make_interval(secs => ${retentionSeconds})`
    })

    // A row still here for the key has expired (find saw none): it is replaced.
    const keep = (request: IdempotentRequest, response: StoredResponse) =>
      sql`INSERT INTO idempotency_keys (key_id, idempotency_key, fingerprint, status, body, location, etag)
          VALUES (${request.keyId}, ${request.key}, ${request.fingerprint}, ${response.status}, ${response.body},
                  ${response.location ?? null}, ${response.etag ?? null})
          ON CONFLICT (key_id, idempotency_key) DO UPDATE SET
            fingerprint = EXCLUDED.fingerprint, status = EXCLUDED.status, body = EXCLUDED.body,
            location = EXCLUDED.location, etag = EXCLUDED.etag, created_at = now()`

      // A span made once, not Effect.fn, which would erase the type parameter R.
    const runSpan = Spans.span("IdempotentCreates.run")
    const run = <R>(request: IdempotentRequest, create: Effect.Effect<StoredResponse, StoreUnavailable, R>) => {
      const attempt = sql.withTransaction(Effect.gen(function*() {
        yield* lockKey(request)
        const row = (yield* find({ keyId: request.keyId, key: request.key }))[0]
        if (row !== undefined) {
          const response = new StoredResponse({
            status: row.status,
            body: row.body,
            ...(row.location === null ? {} : { location: row.location }),
            ...(row.etag === null ? {} : { etag: row.etag })
          }, { disableChecks: true })
          const decision = replay({ fingerprint: row.fingerprint, response }, request)
          if (Result.isFailure(decision)) return yield* decision.failure
          return decision.success
        }
        const response = yield* create
        yield* keep(request, response)
        return { response, replayed: false }
      })).pipe(
        // The create's event commits with this transaction, after the create's own wake.
        Effect.tap(({ replayed }) => replayed ? Effect.void : sequencer.wake)
      )
      return inFlight.exclusive(keyIdentity(request), guard(attempt)).pipe(runSpan)
    }

    // Every instance sweeps; the deletes are idempotent. A failed sweep is retried next time.
    const sweep = sql`DELETE FROM idempotency_keys WHERE created_at <= now() - make_interval(secs => ${retentionSeconds})`
    yield* sweep.pipe(
      Effect.catch((error) => Effect.logWarning("idempotency key sweep failed", error)),
      Effect.repeat(Schedule.spaced(Duration.fromInputUnsafe(options.sweepEvery ?? Duration.hours(1)))),
      // Background upkeep: no trace.
      Effect.withTracerEnabled(false),
      Effect.forkScoped
    )

    return IdempotentCreates.of({ run })
  })

/**
 * IdempotentCreates on the SqlClient in context (PostgreSQL server or embedded PGlite),
 * over the same database as PetRepositorySql and OrderRepositorySql: provide all three
 * from one client.
 */
export const layer = (
  options: Options
): Layer.Layer<IdempotentCreates, Migrator.MigrationError | SqlError.SqlError, SqlClient.SqlClient> =>
  Layer.effect(IdempotentCreates, make(options)).pipe(Layer.provide(Layer.merge(Migrations.layer, EventSequencer.layer)))
