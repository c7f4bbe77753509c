import { DateTime, Duration, Effect, Layer, Schema } from "effect"
import { type Migrator, SqlClient, type SqlError, SqlSchema } from "effect/sql"
import { issueSecret } from "../../../application/webhooks/SecretIssuer.ts"
import { EventId } from "../../../domain/events/EventId.ts"
import { EventType } from "../../../domain/events/EventType.ts"
import { AttemptOutcome, DeliveryAttempt, DeliveryId } from "../../../domain/webhooks/DeliveryAttempt.ts"
import { WebhookLeaseLost, WebhookNotFound } from "../../../domain/webhooks/WebhookErrors.ts"
import { WebhookId } from "../../../domain/webhooks/WebhookId.ts"
import { WebhookSecret } from "../../../domain/webhooks/WebhookSecret.ts"
import { WebhookSubscription } from "../../../domain/webhooks/WebhookSubscription.ts"
import { WebhookUrl } from "../../../domain/webhooks/WebhookUrl.ts"
import { type DeliveryProgress, WebhookRepository } from "../../../ports/webhooks/WebhookRepository.ts"
import * as Migrations from "../Migrations.ts"
import type { Options } from "../pets/PetRepositorySql.ts"
import { unavailableOrDie } from "../UnavailableOrDie.ts"
import * as Spans from "../../observability/Spans.ts"

const COLUMNS = `id, url, types, created_at, disabled_at, disabled_reason, secret, previous_secret,
  previous_secret_until, cursor_event_id, attempt, next_attempt_at, first_attempt_at`

// Rows are decoded through the domain schemas, so a row no service could have written fails loudly.
const WebhookRow = Schema.Struct({
  id: WebhookId,
  url: WebhookUrl,
  types: Schema.NonEmptyArray(EventType),
  created_at: Schema.DateTimeUtcFromDate,
  disabled_at: Schema.NullOr(Schema.DateTimeUtcFromDate),
  disabled_reason: Schema.NullOr(Schema.String),
  secret: WebhookSecret,
  previous_secret: Schema.NullOr(WebhookSecret),
  previous_secret_until: Schema.NullOr(Schema.DateTimeUtcFromDate),
  cursor_event_id: Schema.Union([EventId, Schema.Literal(0n)]),
  attempt: Schema.Int,
  next_attempt_at: Schema.NullOr(Schema.DateTimeUtcFromDate),
  first_attempt_at: Schema.NullOr(Schema.DateTimeUtcFromDate)
})
type WebhookRow = typeof WebhookRow.Type

const DeliveryRow = Schema.Struct({
  id: DeliveryId,
  webhook_id: WebhookId,
  event_id: EventId,
  attempt: Schema.Int,
  attempted_at: Schema.DateTimeUtcFromDate,
  outcome: AttemptOutcome,
  http_status: Schema.NullOr(Schema.Int),
  duration_ms: Schema.Int,
  error: Schema.NullOr(Schema.String)
})

const toWebhook = (row: WebhookRow): WebhookSubscription =>
  new WebhookSubscription({
    id: row.id,
    url: row.url,
    types: row.types,
    createdAt: row.created_at,
    state: row.disabled_at === null
      ? { _tag: "active" }
      : { _tag: "disabled", reason: row.disabled_reason ?? "", disabledAt: row.disabled_at }
  }, { disableChecks: true })

const progressOf = (row: WebhookRow): DeliveryProgress => ({
  cursor: row.cursor_event_id,
  attempt: row.attempt,
  nextAttemptAt: row.next_attempt_at ?? undefined,
  ...(row.first_attempt_at === null ? {} : { firstAttemptAt: row.first_attempt_at })
})

const toTarget = (row: WebhookRow, now: DateTime.Utc) => ({
  webhook: toWebhook(row),
  secrets: row.previous_secret !== null && row.previous_secret_until !== null &&
      DateTime.isLessThan(now, row.previous_secret_until)
    ? [row.secret, row.previous_secret] as const
    : [row.secret] as const,
  progress: progressOf(row)
})

const toDelivery = (row: typeof DeliveryRow.Type): DeliveryAttempt =>
  new DeliveryAttempt({
    id: row.id,
    webhookId: row.webhook_id,
    eventId: row.event_id,
    attempt: row.attempt,
    attemptedAt: row.attempted_at,
    outcome: row.outcome,
    httpStatus: row.http_status ?? undefined,
    durationMs: row.duration_ms,
    error: row.error ?? undefined
  }, { disableChecks: true })

const date = (time: DateTime.Utc | undefined): Date | null => time === undefined ? null : DateTime.toDateUtc(time)

/**
 * One bounded prune of the delivery attempts: the oldest `limit` made before `before`,
 * found through the index on attempted_at (migration 0017), then removed by id, so that
 * it reads no more rows than it removes, and one index entry when there is nothing to
 * remove. (`id IN (SELECT …)` may be planned as a hash join over the whole table; an
 * array of ids is looked up one by one.) Exported so a test can EXPLAIN it.
 */
export const pruneStatement = (sql: SqlClient.SqlClient, query: { readonly before: Date; readonly limit: number }) =>
  sql`WITH gone AS (
        DELETE FROM webhook_deliveries WHERE id = ANY (ARRAY(
          SELECT id FROM webhook_deliveries WHERE attempted_at < ${query.before} ORDER BY attempted_at LIMIT ${query.limit}
        )) RETURNING id
      )
      SELECT count(*)::bigint AS removed FROM gone`

/** Builds a WebhookRepository on a SqlClient (PostgreSQL server or embedded PGlite), once the migrations have run. */
export const make = (options: Options) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* Migrations.Migrations
    const guard = unavailableOrDie(Duration.fromInputUnsafe(options.timeout))
    const columns = sql.literal(COLUMNS)

    // A statement that returns the subscription's row, or fails WebhookNotFound when there is none.
    const one = (id: WebhookId, statement: Effect.Effect<ReadonlyArray<unknown>, SqlError.SqlError>) =>
      Effect.flatMap(
        SqlSchema.findAll({ Request: Schema.Void, Result: WebhookRow, execute: () => statement })(undefined),
        (rows) => rows[0] === undefined ? Effect.fail(new WebhookNotFound({ id })) : Effect.succeed(rows[0])
      )

    const create = Spans.method("WebhookRepository.create", (request: {
      readonly url: WebhookUrl
      readonly types: readonly [EventType, ...Array<EventType>]
      readonly createdAt: DateTime.Utc
      readonly after: EventId | 0n
    }) => {
      const secret = issueSecret()
      return SqlSchema.findOne({
        Request: Schema.Void,
        Result: WebhookRow,
        execute: () =>
          sql`INSERT INTO webhooks (url, types, created_at, secret, cursor_event_id)
              VALUES (${request.url}, ${request.types}, ${date(request.createdAt)}, ${secret}, ${request.after})
              RETURNING ${columns}`
      })(undefined).pipe(
        Effect.map((row) => ({ webhook: toWebhook(row), secret })),
        Effect.catchTag("NoSuchElementError", Effect.die),
        guard
      )
    })

    const list = SqlSchema.findAll({
      Request: Schema.Void,
      Result: WebhookRow,
      execute: () => sql`SELECT ${columns} FROM webhooks ORDER BY id`
    })(undefined).pipe(Effect.map((rows) => rows.map(toWebhook)), guard, Spans.span("WebhookRepository.list"))

    const get = Spans.method("WebhookRepository.get", (id: WebhookId) =>
      guard(Effect.map(one(id, sql`SELECT ${columns} FROM webhooks WHERE id = ${id}`), toWebhook))
    )

    // The attempts go with it (ON DELETE CASCADE).
    const remove = Spans.method("WebhookRepository.delete", (id: WebhookId) =>
      guard(Effect.asVoid(one(id, sql`DELETE FROM webhooks WHERE id = ${id} RETURNING ${columns}`)))
    )

    const rotateSecret = Spans.method("WebhookRepository.rotateSecret", 
      (id: WebhookId, at: DateTime.Utc, overlap: Duration.Duration) => {
        const secret = issueSecret()
        return guard(Effect.map(
          one(
            id,
            sql`UPDATE webhooks SET previous_secret = secret, previous_secret_until = ${date(DateTime.addDuration(at, overlap))},
                                    secret = ${secret}
                WHERE id = ${id} RETURNING ${columns}`
          ),
          (row) => ({ webhook: toWebhook(row), secret })
        ))
      }
    )

    const disable = Spans.method("WebhookRepository.disable", (id: WebhookId, reason: string, at: DateTime.Utc) =>
      guard(Effect.map(
        one(
          id,
          sql`UPDATE webhooks SET disabled_at = coalesce(disabled_at, ${date(at)}),
                                  disabled_reason = coalesce(disabled_reason, ${reason})
              WHERE id = ${id} RETURNING ${columns}`
        ),
        toWebhook
      ))
    )

    // One statement. The SET expressions read the row as it was: only a disabled one has
    // its tries cleared; an active one is written back as it stands.
    const enable = Spans.method("WebhookRepository.enable", (id: WebhookId) =>
      guard(Effect.map(
        one(
          id,
          sql`UPDATE webhooks SET disabled_at = NULL, disabled_reason = NULL,
                                  attempt = CASE WHEN disabled_at IS NULL THEN attempt ELSE 0 END,
                                  next_attempt_at = CASE WHEN disabled_at IS NULL THEN next_attempt_at END,
                                  first_attempt_at = CASE WHEN disabled_at IS NULL THEN first_attempt_at END
              WHERE id = ${id} RETURNING ${columns}`
        ),
        toWebhook
      ))
    )

    const signing = Spans.method("WebhookRepository.signing", (id: WebhookId, now: DateTime.Utc) =>
      guard(Effect.map(one(id, sql`SELECT ${columns} FROM webhooks WHERE id = ${id}`), (row) => {
        const { secrets, webhook } = toTarget(row, now)
        return { webhook, secrets }
      }))
    )

    // One statement: the due rows with work that no live lease holds, furthest behind
    // first, locked and skipped by any other claim under way, then leased. A row has work
    // when the head of one of its types (passed as two arrays) is above its cursor. No
    // transaction outlives it: the HTTP calls come after.
    const claim = Spans.method("WebhookRepository.claim", (request: {
      readonly now: DateTime.Utc
      readonly owner: string
      readonly until: DateTime.Utc
      readonly limit: number
      readonly heads: ReadonlyMap<EventType, EventId>
    }) =>
      SqlSchema.findAll({
        Request: Schema.Void,
        Result: WebhookRow,
        execute: () =>
          sql`UPDATE webhooks SET lease_owner = ${request.owner}, lease_until = ${date(request.until)}
              WHERE id IN (
                SELECT id FROM webhooks
                WHERE disabled_at IS NULL AND (next_attempt_at IS NULL OR next_attempt_at <= ${date(request.now)})
                  AND (lease_until IS NULL OR lease_until <= ${date(request.now)})
                  AND cursor_event_id < (
                    SELECT coalesce(max(head.id), 0) FROM unnest(${[...request.heads.keys()]}::text[],
                      ${[...request.heads.values()].map(String)}::bigint[]) AS head(type, id)
                    WHERE head.type = ANY(webhooks.types)
                  )
                ORDER BY cursor_event_id, id LIMIT ${request.limit}
                FOR UPDATE SKIP LOCKED
              )
              RETURNING ${columns}`
      })(undefined).pipe(
        Effect.map((rows) =>
          [...rows].sort((a, b) =>
            a.cursor_event_id !== b.cursor_event_id
              ? (a.cursor_event_id < b.cursor_event_id ? -1 : 1)
              : a.id < b.id ? -1 : a.id > b.id ? 1 : 0
          ).map((row) => toTarget(row, request.now))
        ),
        guard
      )
    )

    const release = Spans.method("WebhookRepository.release", (id: WebhookId, owner: string) =>
      guard(Effect.asVoid(
        sql`UPDATE webhooks SET lease_owner = NULL, lease_until = NULL WHERE id = ${id} AND lease_owner = ${owner}`
      ))
    )

    const anyActive = SqlSchema.findOne({
      Request: Schema.Void,
      Result: Schema.Struct({ active: Schema.Boolean }),
      execute: () => sql`SELECT EXISTS (SELECT 1 FROM webhooks WHERE disabled_at IS NULL) AS active`
    })(undefined).pipe(
      Effect.map((row) => row.active),
      Effect.catchTag("NoSuchElementError", Effect.die),
      guard,
      Spans.span("WebhookRepository.anyActive")
    )

    const pending = SqlSchema.findAll({
      Request: Schema.Void,
      Result: WebhookRow,
      execute: () => sql`SELECT ${columns} FROM webhooks WHERE disabled_at IS NULL ORDER BY id`
    })(undefined).pipe(
      Effect.map((rows) => rows.map((row) => ({ webhook: toWebhook(row), progress: progressOf(row) }))),
      guard,
      Spans.span("WebhookRepository.pending")
    )

    // Moves the progress only while `owner` holds the lease (expired or not: see the port);
    // when no row moved, a second look says whether the subscription is gone or was taken.
    const progressStatement = (id: WebhookId, owner: string, progress: DeliveryProgress) =>
      sql`UPDATE webhooks SET cursor_event_id = ${progress.cursor}, attempt = ${progress.attempt},
                              next_attempt_at = ${date(progress.nextAttemptAt)},
                              first_attempt_at = ${date(progress.firstAttemptAt)}
          WHERE id = ${id} AND lease_owner = ${owner} RETURNING id`.pipe(
        Effect.flatMap((rows) =>
          rows.length > 0
            ? Effect.void
            : Effect.flatMap(
              one(id, sql`SELECT ${columns} FROM webhooks WHERE id = ${id}`),
              () => Effect.fail(new WebhookLeaseLost({ id, owner }))
            )
        )
      )

    const advance = Spans.method("WebhookRepository.advance", (id: WebhookId, owner: string, progress: DeliveryProgress) =>
      guard(progressStatement(id, owner, progress))
    )

    const recordAttempt = Spans.method("WebhookRepository.recordAttempt", (
      id: WebhookId,
      owner: string,
      attempt: Parameters<WebhookRepository["Service"]["recordAttempt"]>[2],
      progress: DeliveryProgress
    ) =>
      // The progress first: when the lease is lost the transaction ends before the INSERT.
      sql.withTransaction(Effect.gen(function*() {
        yield* progressStatement(id, owner, progress)
        const row = yield* SqlSchema.findOne({
          Request: Schema.Void,
          Result: DeliveryRow,
          execute: () =>
            sql`INSERT INTO webhook_deliveries
                  (webhook_id, event_id, attempt, attempted_at, outcome, http_status, duration_ms, error)
                VALUES (${id}, ${attempt.eventId}, ${attempt.attempt}, ${date(attempt.attemptedAt)}, ${attempt.outcome},
                        ${attempt.httpStatus ?? null}, ${attempt.durationMs}, ${attempt.error ?? null})
                RETURNING id, webhook_id, event_id, attempt, attempted_at, outcome, http_status, duration_ms, error`
        })(undefined)
        return toDelivery(row)
      })).pipe(Effect.catchTag("NoSuchElementError", Effect.die), guard)
    )

    const deliveries = Spans.method("WebhookRepository.deliveries", (
      id: WebhookId,
      page: { readonly after: DeliveryId | 0n; readonly limit: number }
    ) =>
      Effect.gen(function*() {
        yield* one(id, sql`SELECT ${columns} FROM webhooks WHERE id = ${id}`)
        const rows = yield* SqlSchema.findAll({
          Request: Schema.Void,
          Result: DeliveryRow,
          execute: () =>
            sql`SELECT id, webhook_id, event_id, attempt, attempted_at, outcome, http_status, duration_ms, error
                FROM webhook_deliveries WHERE webhook_id = ${id} AND id > ${page.after} ORDER BY id LIMIT ${page.limit}`
        })(undefined)
        return rows.map(toDelivery)
      }).pipe(guard)
    )

    const pruneBatch = SqlSchema.findOne({
      Request: Schema.Struct({ before: Schema.DateTimeUtcFromDate, limit: Schema.Number }),
      Result: Schema.Struct({ removed: Schema.BigInt }),
      execute: (query) => pruneStatement(sql, query)
    })

    const pruneDeliveries = Spans.method("WebhookRepository.pruneDeliveries", (query: {
      readonly before: DateTime.Utc
      readonly limit: number
    }) =>
      pruneBatch(query).pipe(
        Effect.catchTag("NoSuchElementError", Effect.die),
        Effect.map(({ removed }) => Number(removed)),
        guard
      )
    )

    return WebhookRepository.of({
      create,
      list,
      get,
      delete: remove,
      rotateSecret,
      disable,
      enable,
      signing,
      claim,
      release,
      anyActive,
      pending,
      recordAttempt,
      advance,
      deliveries,
      pruneDeliveries
    })
  })

/** A WebhookRepository on the SqlClient in context (PostgreSQL server or embedded PGlite). */
export const layer = (
  options: Options
): Layer.Layer<WebhookRepository, Migrator.MigrationError | SqlError.SqlError, SqlClient.SqlClient> =>
  Layer.effect(WebhookRepository, make(options)).pipe(Layer.provide(Migrations.layer))
