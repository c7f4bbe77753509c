import type { PgClient } from "@effect/sql-pg"
import { DateTime, Duration, Effect, Layer, PubSub, Schema, Stream } from "effect"
import { type Migrator, SqlClient, type SqlError, SqlSchema } from "effect/sql"
import { ApiKey, KeyDigest } from "../../../domain/keys/ApiKey.ts"
import { KeyId } from "../../../domain/keys/KeyId.ts"
import { KeyName } from "../../../domain/keys/KeyName.ts"
import { KeyScope } from "../../../domain/keys/KeyScope.ts"
import { ApiKeyStore } from "../../../ports/keys/ApiKeyStore.ts"
import * as Migrations from "../Migrations.ts"
import { PgNotifications } from "../PgNotifications.ts"
import { unavailableOrDie } from "../UnavailableOrDie.ts"
import * as Spans from "../../observability/Spans.ts"

/** The PostgreSQL channel on which every key change is announced to the other instances. */
export const CHANGES_CHANNEL = "animal_store_api_keys"

/** Tuning for the SQL-backed key store. */
export interface Options {
  /** Longest a single store call may take before it fails with StoreUnavailable. */
  readonly timeout: Duration.Input
  /**
   * Also report changes made by other processes, through LISTEN on {@link CHANGES_CHANNEL}
   * (a PostgreSQL server), on the instance's one notification connection (PgNotifications).
   * Off for PGlite: its one connection cannot be given to a listener.
   */
  readonly listen: boolean
}

// Rows are decoded through the domain schemas, so a row no service could have written fails loudly.
const KeyRow = Schema.Struct({
  id: KeyId,
  name: KeyName,
  scope: KeyScope,
  digest: KeyDigest,
  created_at: Schema.DateTimeUtcFromDate,
  expires_at: Schema.NullOr(Schema.DateTimeUtcFromDate),
  last_used_at: Schema.NullOr(Schema.DateTimeUtcFromDate),
  revoked_at: Schema.NullOr(Schema.DateTimeUtcFromDate)
})

const toKey = (row: typeof KeyRow.Type): ApiKey =>
  new ApiKey({
    id: row.id,
    name: row.name,
    scope: row.scope,
    digest: row.digest,
    createdAt: row.created_at,
    expiresAt: row.expires_at ?? undefined,
    lastUsedAt: row.last_used_at ?? undefined,
    revokedAt: row.revoked_at ?? undefined
  }, { disableChecks: true })

const date = (time: DateTime.Utc | undefined): Date | null => time === undefined ? null : DateTime.toDateUtc(time)

/** Builds an ApiKeyStore on a sql-pg client (PostgreSQL server or embedded PGlite), once the migrations have run. */
export const make = (options: Options) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const notifications = yield* PgNotifications
    yield* Migrations.Migrations
    const guard = unavailableOrDie(Duration.fromInputUnsafe(options.timeout))
    // Key changes: this process's own writes, announced at once (and on a server to
    // everyone through NOTIFY), and with `listen` other processes' NOTIFY.
    const local = yield* PubSub.sliding<void>(1)
    // A change and its NOTIFY in one transaction: PostgreSQL delivers the notification at
    // commit, so there is no committed change that was not announced, and no announcement
    // of one that rolled back.
    const announced = <A, E, R>(write: Effect.Effect<A, E, R>) =>
      sql.withTransaction(Effect.tap(write, () => sql`SELECT pg_notify(${CHANGES_CHANNEL}, '')`)).pipe(
        Effect.tap(() => PubSub.publish(local, undefined))
      )

    const insertStatement = (key: ApiKey) =>
      sql`INSERT INTO api_keys (id, name, scope, digest, created_at, expires_at, last_used_at, revoked_at)
          VALUES (${key.id}, ${key.name}, ${key.scope}, ${key.digest}, ${date(key.createdAt)},
                  ${date(key.expiresAt)}, ${date(key.lastUsedAt)}, ${date(key.revokedAt)})`

    const all = SqlSchema.findAll({
      Request: Schema.Void,
      Result: KeyRow,
      execute: () =>
        sql`SELECT id, name, scope, digest, created_at, expires_at, last_used_at, revoked_at
            FROM api_keys ORDER BY created_at, id`
    })

    const insert = Spans.method("ApiKeyStore.insert", (key: ApiKey) => guard(Effect.asVoid(announced(insertStatement(key)))))

    // The table lock makes "is it empty?" and the insert one step for concurrent starters.
    const insertIfEmpty = Spans.method("ApiKeyStore.insertIfEmpty", (key: ApiKey) =>
      guard(sql.withTransaction(Effect.gen(function*() {
        yield* sql`LOCK TABLE api_keys IN EXCLUSIVE MODE`
        const existing = yield* sql`SELECT 1 FROM api_keys LIMIT 1`
        if (existing.length > 0) return false
        yield* announced(insertStatement(key))
        return true
      })))
    )

    const list = guard(Effect.map(all(undefined), (rows) => rows.map(toKey))).pipe(Spans.span("ApiKeyStore.list"))

    const revoke = Spans.method("ApiKeyStore.revoke", (ids: ReadonlyArray<KeyId>, at: DateTime.Utc) =>
      ids.length === 0 ? Effect.void : guard(Effect.asVoid(announced(
        sql`UPDATE api_keys SET revoked_at = ${date(at)} WHERE ${sql.in("id", ids)} AND revoked_at IS NULL`
      )))
    )

    const expireStatements = (expiries: ReadonlyArray<readonly [KeyId, DateTime.Utc]>) =>
      Effect.forEach(expiries, ([id, at]) => sql`UPDATE api_keys SET expires_at = ${date(at)} WHERE id = ${id}`, {
        discard: true
      })

    const expire = Spans.method("ApiKeyStore.expire", (expiries: ReadonlyArray<readonly [KeyId, DateTime.Utc]>) =>
      guard(announced(expireStatements(expiries)))
    )

    // One transaction: an insert that fails rolls the expiries back.
    const rotate = Spans.method("ApiKeyStore.rotate", (successor: ApiKey, expiries: ReadonlyArray<readonly [KeyId, DateTime.Utc]>) =>
        guard(Effect.asVoid(announced(Effect.andThen(expireStatements(expiries), insertStatement(successor)))))
    )

    const touch = Spans.method("ApiKeyStore.touch", (uses: ReadonlyArray<readonly [KeyId, DateTime.Utc]>) =>
      guard(Effect.forEach(
        uses,
        ([id, at]) =>
          sql`UPDATE api_keys SET last_used_at = ${date(at)}
              WHERE id = ${id} AND (last_used_at IS NULL OR last_used_at < ${date(at)})`,
        { discard: true }
      ))
    )

    // Another instance's NOTIFY (and the start of every LISTEN, as one may have been missed).
    yield* Effect.forkScoped(Stream.runForEach(notifications.listen(CHANGES_CHANNEL), () => PubSub.publish(local, undefined)))

    const changes = Effect.map(PubSub.subscribe(local), Stream.fromSubscription)

    return ApiKeyStore.of({ insert, insertIfEmpty, list, revoke, expire, rotate, touch, changes })
  })

/** An ApiKeyStore on the sql-pg client in context. */
export const layer = (
  options: Options
): Layer.Layer<ApiKeyStore, Migrator.MigrationError | SqlError.SqlError, PgClient.PgClient | SqlClient.SqlClient> =>
  Layer.effect(ApiKeyStore, make(options)).pipe(
    Layer.provide(Migrations.layer),
    Layer.provide(options.listen ? PgNotifications.layer : PgNotifications.none)
  )
