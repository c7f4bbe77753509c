import { Clock, Context, Duration, Effect, Layer, Queue } from "effect"
import { SqlClient, type SqlError, type Migrator } from "effect/sql"
import * as Migrations from "../Migrations.ts"
import * as Spans from "../../observability/Spans.ts"

/** The channel the sequencer notifies when it has numbered events (EventLogSql listens with `listen`). */
export const EVENTS_CHANNEL = "animal_store_events"

// How often each instance numbers what no wake asked for: the events of a writer killed
// between its commit and its wake, or of an instance that stopped.
const BACKSTOP = Duration.seconds(1)

// After a run, the wakes of the commits that follow gather this long into the next one:
// a run per batch of commits, not one per commit (each run is a transaction of its own
// and a second write of each row). At load average 2–4 the outbox bench measured with /
// without 0.65–0.73 on PostgreSQL with 20 ms, 0.70–0.83 with 100 ms. It delays the NOTIFY
// that SSE and the webhooks follow, not a read of the feed, which numbers first; the
// embedded store's feed polls every 250 ms anyway.
const GATHER = Duration.millis(100)

// How often, at most, the fiber vacuums `events_pending` after rows left it. Every move
// leaves its rows dead there, and autovacuum looks at a table once a minute at best: in
// the outbox bench the table had grown to 2,249 pages (105,000 dead rows) by its end,
// and each run scanned them all. VACUUM of a few pages costs about a millisecond.
const VACUUM_EVERY = Duration.seconds(1)

/**
 * Gives committed events their feed ids, off the writers' commit path.
 *
 * A writer inserts its event into `events_pending` (a table without indexes) in its
 * change's transaction, and commits with no lock beyond its own rows and no NOTIFY:
 * concurrent changes commit concurrently. The outbox guarantee is the transaction's: a
 * change that rolls back leaves no event; a committed one stays, kill -9 or not, until
 * a sequencer moves it into `events`.
 *
 * A run is one statement, `events_sequence` (migrations 0014 and 0015), in a transaction
 * of its own with no round trip to this process inside it. When some event is pending it
 * takes `pg_advisory_xact_lock(25974, 1)`, then in a new statement (READ COMMITTED: a
 * snapshot taken after the lock) moves every pending row it sees into `events` with a
 * number from `events_id`, in the order the rows were inserted, and notifies
 * {@link EVENTS_CHANNEL} once.
 *
 * Why a reader that has seen id n never later sees an id below n: only sequencers write
 * to `events`, and they serialize on the lock, which PostgreSQL releases only after the
 * holder's commit is visible to every new snapshot. So run k+1's snapshot, taken after
 * the lock, sees run k's numbers, and every nextval it draws is above them; its numbers
 * become visible after run k's. Readers read `id > after`, never a provisional id. A
 * row's number is drawn once: the next run's snapshot no longer sees it pending.
 *
 * `occurred_at` stays the time the writer inserted the row, the change's time (a webhook
 * subscription receives what occurred after it was made): it rises with the id except
 * between transactions that overlapped, by at most a transaction's duration, which
 * retention's days-long "older than" cut can ignore.
 *
 * Who runs it: one background fiber per instance, woken by the repositories right after
 * their transactions commit (the wakes during a run and the 100 ms after it ask for one
 * more) and every second regardless; and EventLogSql before it reads, when anything is unnumbered, so that a
 * client reads the events of changes it saw committed.
 */
export class EventSequencer extends Context.Service<EventSequencer, {
  /** Numbers every event committed before the call (another instance's run may have done so). */
  readonly run: Effect.Effect<void, SqlError.SqlError>
  /** Asks the background fiber for a run, without waiting for it. Call it after the writing transaction commits. */
  readonly wake: Effect.Effect<void>
}>()("animal-store/adapters/postgres/EventSequencer") {
  /** The sequencer on the SqlClient in context, its background fiber running while the layer lives. */
  static readonly layer: Layer.Layer<EventSequencer, Migrator.MigrationError | SqlError.SqlError, SqlClient.SqlClient> =
    Layer.effect(
      EventSequencer,
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* Migrations.Migrations
        const wakes = yield* Queue.sliding<void>(1)
        let moved = false
        let vacuumedAt = 0
        const run = sql<{ readonly numbered: string }>`SELECT events_sequence(${EVENTS_CHANNEL})::text AS numbered`.pipe(
          Effect.map((rows) => {
            if (rows[0]?.numbered !== "0") moved = true
          }),
          Spans.span("EventSequencer.run")
        )
        const vacuum = Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          if (!moved || now - vacuumedAt < Duration.toMillis(VACUUM_EVERY)) return
          moved = false
          vacuumedAt = now
          yield* sql`VACUUM events_pending`
        })
        // The backstop is a wake of its own: a commit costs the loop no timer, nor a race.
        yield* Effect.forkScoped(Effect.forever(Effect.andThen(Effect.sleep(BACKSTOP), Queue.offer(wakes, undefined))))
        // The background runs record no trace (one a second per instance, mostly numbering
        // nothing); a reader's run is traced within the read that asks for it.
        yield* Effect.forkScoped(Effect.forever(Queue.take(wakes).pipe(
          Effect.andThen(run),
          Effect.andThen(vacuum),
          Effect.catch((error) => Effect.logWarning(`event sequencer: ${error.message}`)),
          Effect.andThen(Effect.sleep(GATHER))
        )).pipe(Effect.withTracerEnabled(false)))
        return EventSequencer.of({ run, wake: Effect.asVoid(Queue.offer(wakes, undefined)) })
      })
    ).pipe(Layer.provide(Migrations.layer))
}
