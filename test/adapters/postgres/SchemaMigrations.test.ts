import { assert, describe, it, layer } from "@effect/vitest"
import { Duration, Effect, Layer, Redacted, Schedule } from "effect"
import Pg from "pg"
import { Migrator, SqlClient, type SqlError } from "effect/sql"
import { EventSequencer } from "../../../src/adapters/postgres/events/EventSequencer.ts"
import * as Migrations from "../../../src/adapters/postgres/Migrations.ts"
import * as PostgresClient from "../../../src/adapters/postgres/PostgresClient.ts"
import * as OrderRepositorySql from "../../../src/adapters/postgres/orders/OrderRepositorySql.ts"
import * as SchemaMigrations from "../../../src/adapters/postgres/SchemaMigrations.ts"
import * as PetRepositorySql from "../../../src/adapters/postgres/pets/PetRepositorySql.ts"
import { PetId } from "../../../src/domain/pets/PetId.ts"
import { SearchText } from "../../../src/domain/pets/PetSearch.ts"
import { PetTag } from "../../../src/domain/pets/PetTag.ts"
import type { PetInventory } from "../../../src/domain/pets/PetInventory.ts"
import { freshDatabaseUrl, layerFreshDatabase, postgresAvailable } from "./TestDatabase.ts"

// Every migration id of this release, in order.
const MIGRATION_IDS = (await Effect.runPromise(SchemaMigrations.loader)).map(([id]) => id)

// The migrations a release shipped: what a database it created holds.
const release = (lastMigration: number) =>
  Migrator.make({})({
    loader: Effect.map(SchemaMigrations.loader, (migrations) => migrations.filter(([id]) => id <= lastMigration)),
    table: SchemaMigrations.MIGRATIONS_TABLE
  })

// The database's own answer to a write the domain would refuse: the reason and the server's message.
const refused = <A, R>(statement: Effect.Effect<A, SqlError.SqlError, R>) =>
  Effect.map(Effect.flip(statement), (error) => `${error.reason._tag}: ${String((error.reason.cause as Error).message)}`)

describe.skipIf(!postgresAvailable)("SchemaMigrations on a PostgreSQL server", () => {
  layer(layerFreshDatabase({ maxConnections: 1 }))((it) => {
    it.effect("a database of the first release upgrades in place, keeping its pets", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* release(1)
        yield* sql`INSERT INTO pets (name, category_id, status) VALUES ('Rex', 9007199254740993, 'sold'), ('\u0085', 1, NULL)`
        const applied = yield* SchemaMigrations.run
        assert.deepStrictEqual(applied.map(([id]) => id), MIGRATION_IDS.filter((id) => id > 1))
        const rows = yield* sql<{ name: string; category_id: bigint }>`SELECT name, category_id FROM pets ORDER BY id`
        assert.deepStrictEqual(rows.map((row) => [row.name, row.category_id]), [["Rex", 9007199254740993n], ["\u0085", 1n]])
        // The new rule holds: a name of ECMAScript white space only is refused by the database too.
        assert.include(
          yield* refused(sql`INSERT INTO pets (name, category_id) VALUES (${"\u3000\ufeff"}, 1)`),
          "ConstraintError: new row for relation \"pets\" violates check constraint \"pets_name_not_blank\""
        )
        // API keys are kept as digests only: a key's own text does not fit the digest column.
        assert.include(
          yield* refused(sql`INSERT INTO api_keys (id, name, scope, digest, created_at)
                             VALUES ('0123456789ab', 'k', 'write', ${`as_0123456789ab_${"A".repeat(43)}`}, now())`),
          "api_keys_digest_format"
        )
        assert.deepStrictEqual(yield* SchemaMigrations.run, [])
      }))
  })

  layer(layerFreshDatabase({ maxConnections: 1 }))((it) => {
    it.effect("a database of the pets-only release gains orders in place, with the rules in the schema", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* release(2)
        yield* sql`INSERT INTO pets (name, category_id, status) VALUES ('Rex', 1, 'available'), ('Tom', 2, 'sold')`
        // The adapter runs the migrations as it starts, then serves the pets already there.
        const orders = yield* OrderRepositorySql.make({ timeout: "10 seconds" }).pipe(
          Effect.provide(Layer.merge(Migrations.layer, EventSequencer.layer))
        )
        const migrations = yield* sql<{ migration_id: number }>`
          SELECT migration_id FROM ${sql(SchemaMigrations.MIGRATIONS_TABLE)} ORDER BY migration_id`
        assert.deepStrictEqual(migrations.map((row) => row.migration_id), MIGRATION_IDS)
        const order = yield* orders.place(PetId.make(1n))
        assert.strictEqual(order.id, 1n)
        assert.strictEqual((yield* Effect.flip(orders.place(PetId.make(2n))))._tag, "PetNotAvailable")

        // What no service would write, the database refuses too.
        const violations = [
          [sql`INSERT INTO orders (pet_id, quantity, status) VALUES (1, 1, 'approved')`, "UniqueViolation", "orders_one_open_per_pet"],
          [sql`INSERT INTO orders (pet_id, quantity, status) VALUES (99, 1, 'placed')`, "ConstraintError", "orders_pet_id_fkey"],
          [sql`INSERT INTO orders (pet_id, quantity, status) VALUES (2, 2, 'delivered')`, "ConstraintError", "orders_quantity_one"],
          [sql`INSERT INTO orders (pet_id, quantity, status) VALUES (2, 1, 'shipped')`, "ConstraintError", "orders_status_enum"]
        ] as const
        for (const [statement, reason, constraint] of violations) {
          const answer = yield* refused(statement)
          assert.match(answer, new RegExp(`^${reason}: .*"${constraint}"`), answer)
        }
        // Closed orders are not limited.
        yield* sql`INSERT INTO orders (pet_id, quantity, status) VALUES (1, 1, 'cancelled'), (1, 1, 'cancelled')`
        assert.deepStrictEqual(yield* SchemaMigrations.run, [])
      }))
  })

  layer(layerFreshDatabase({ maxConnections: 1 }))((it) => {
    it.effect("a migration numbered below the latest applied one (merged later) still runs, once", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        // A database migrated by a release that had 0005 but not yet 0004.
        const withoutFour = Effect.map(SchemaMigrations.loader, (migrations) => migrations.filter(([id]) => id !== 4))
        assert.deepStrictEqual((yield* SchemaMigrations.runFrom(withoutFour)).map(([id]) => id), MIGRATION_IDS.filter((id) => id !== 4))
        assert.deepStrictEqual(yield* SchemaMigrations.run, [[4, "create_api_keys"]])
        assert.deepStrictEqual(yield* sql`SELECT count(*)::int AS n FROM api_keys`, [{ n: 0 }])
        const migrations = yield* sql<{ migration_id: number }>`
          SELECT migration_id FROM ${sql(SchemaMigrations.MIGRATIONS_TABLE)} ORDER BY migration_id`
        assert.deepStrictEqual(migrations.map((row) => row.migration_id), MIGRATION_IDS)
        assert.deepStrictEqual(yield* SchemaMigrations.run, [])
      }))
  })

  layer(layerFreshDatabase({ maxConnections: 1 }))((it) => {
    it.effect("counting pets by status starts from the pets already stored, then follows every change", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* release(5)
        yield* sql`INSERT INTO pets (name, category_id, status)
                   SELECT 'pet ' || g, g, (ARRAY['available', 'pending', 'sold', NULL])[1 + g % 4]
                   FROM generate_series(1, 1003) AS g`
        yield* sql`INSERT INTO orders (pet_id, quantity, status) SELECT id, 1, 'placed' FROM pets WHERE status = 'pending'`
        // What the inventory read before the counts were kept.
        const counted = sql<{ status: string | null; count: number }>`
          SELECT status, count(*)::int AS count FROM pets WHERE deleted_at IS NULL GROUP BY status ORDER BY status`
        const inventory = Effect.flatMap(PetRepositorySql.make({ timeout: "10 seconds" }), (pets) => pets.inventory).pipe(
          Effect.provide(Layer.merge(Migrations.layer, EventSequencer.layer))
        )
        const asRows = (counts: PetInventory) =>
          [["available", counts.available], ["pending", counts.pending], ["sold", counts.sold], [null, counts.none]]
            .filter(([, count]) => count !== 0)
        const expected = Effect.map(counted, (rows) => rows.map((row) => [row.status, row.count]))

        assert.deepStrictEqual((yield* SchemaMigrations.run).map(([id]) => id), MIGRATION_IDS.filter((id) => id >= 6))
        assert.deepStrictEqual(yield* inventory, { available: 250, pending: 251, sold: 251, none: 251 })
        // Changes by any writer, in bulk or one at a time, count; a rolled-back one does not.
        yield* sql`UPDATE pets SET status = 'sold' WHERE id % 10 = 0`
        yield* sql`UPDATE pets SET name = 'renamed' WHERE id < 100`
        yield* sql`DELETE FROM pets WHERE id % 7 = 0 AND id NOT IN (SELECT pet_id FROM orders)`
        yield* sql`INSERT INTO pets (name, category_id) VALUES ('one more', 1)`
        yield* Effect.flip(sql.withTransaction(Effect.andThen(
          sql`INSERT INTO pets (name, category_id, status) VALUES ('rolled back', 1, 'sold')`,
          Effect.fail("roll back")
        )))
        assert.deepStrictEqual(asRows(yield* inventory), yield* expected)
        // A retired pet (0009) leaves its status; a change of a retired pet counts nowhere; one brought back counts again.
        yield* sql`UPDATE pets SET deleted_at = now() WHERE id % 3 = 0`
        assert.deepStrictEqual(asRows(yield* inventory), yield* expected)
        yield* sql`UPDATE pets SET status = 'available' WHERE id % 6 = 0`
        assert.deepStrictEqual(asRows(yield* inventory), yield* expected)
        yield* sql`UPDATE pets SET deleted_at = NULL WHERE id % 9 = 0`
        assert.deepStrictEqual(asRows(yield* inventory), yield* expected)
        yield* sql`TRUNCATE pets CASCADE`
        assert.deepStrictEqual(yield* inventory, { available: 0, pending: 0, sold: 0, none: 0 })
      }))
  })
})

describe.skipIf(!postgresAvailable)("tags and search (0020) on a PostgreSQL server", () => {
  layer(layerFreshDatabase({ maxConnections: 1 }))((it) => {
    it.effect("the pets already stored become searchable; tags and their counts follow every writer; bad tags are refused", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* release(19)
        yield* sql`INSERT INTO pets (name, category_id) VALUES ('Zoë', 1), ('ZOE II', 1), ('Rex', 1)`
        yield* SchemaMigrations.run
        const keys = yield* sql<{ name_key: string }>`SELECT name_key FROM pets ORDER BY id`
        assert.deepStrictEqual(keys.map((row) => row.name_key), ["zoe", "zoe ii", "rex"])
        const pets = yield* PetRepositorySql.make({ timeout: "5 seconds" }).pipe(
          Effect.provide(Layer.merge(Migrations.layer, EventSequencer.layer))
        )
        const found = yield* pets.list({ limit: 10, q: SearchText.make("zoë") })
        assert.deepStrictEqual(found.map((pet) => pet.name), ["Zoë", "ZOE II"])
        // Raw writes, in bulk too: the tag index and the counts follow them.
        yield* sql`UPDATE pets SET tags = ARRAY['cat', 'young'] WHERE id <= 2`
        yield* sql`UPDATE pets SET tags = ARRAY['cat'] WHERE id = 3`
        yield* sql`UPDATE pets SET deleted_at = now() WHERE id = 2`
        assert.deepStrictEqual(yield* pets.tags({ limit: 10 }), [{ tag: "cat", pets: 2 }, { tag: "young", pets: 1 }])
        const young = yield* pets.list({ limit: 10, tags: [PetTag.make("young")] })
        assert.deepStrictEqual(young.map((pet) => pet.id), [PetId.make(1n)])
        yield* sql`TRUNCATE pets CASCADE`
        assert.deepStrictEqual(yield* pets.tags({ limit: 10 }), [])
        for (
          const tags of [["Cat"], ["cat", "cat"], ["cat", "dog", "cat"], ["-x"], ["a,b"], ["x".repeat(33)], Array.from({ length: 11 }, (_, i) => `t${i}`)]
        ) {
          assert.include(
            yield* refused(sql`INSERT INTO pets (name, category_id, tags) VALUES ('x', 1, ${tags}::text[])`),
            "pets_tags_valid"
          )
        }
        for (const tags of ["ARRAY['cat', NULL]", "ARRAY[ARRAY['cat'], ARRAY['dog']]"]) {
          assert.include(
            yield* refused(sql`INSERT INTO pets (name, category_id, tags) VALUES ('x', 1, ${sql.literal(tags)})`),
            "pets_tags_valid"
          )
        }
        yield* sql`INSERT INTO pets (name, category_id, tags) VALUES ('x', 1, ${["cat", "dog-2", "y".repeat(32)]}::text[])`
        // What every write runs is plpgsql, whose plans a connection keeps (a SQL function that
        // cannot be inlined is planned again on each statement): the trigger functions and the
        // CHECK, with nothing of SQL's left for them to call.
        const languages = yield* sql<{ proname: string; lanname: string }>`
          SELECT p.proname, l.lanname FROM pg_proc AS p JOIN pg_language AS l ON l.oid = p.prolang
          WHERE p.proname IN ('pet_tags_valid', 'pet_counts_add', 'tag_counts_add', 'pet_counts_follow', 'pet_tags_follow')
          ORDER BY p.proname`
        assert.deepStrictEqual(languages.map((row) => `${row.proname}:${row.lanname}`), [
          "pet_counts_follow:plpgsql",
          "pet_tags_follow:plpgsql",
          "pet_tags_valid:plpgsql"
        ])
      }))
  })
})

describe.skipIf(!postgresAvailable)("the status counts under concurrent claims", () => {
  // Three raw connections play a lost claim against a writer that shares its count slot
  // (slots are backend pid % 16): before 0008, the lost claim wrote its slot while holding
  // the pet, the writer held the slot and waited for the pet, and PostgreSQL aborted one
  // of them with a deadlock (seen as 503s in two instances ordering one pet).
  it.live("a claim that loses keeps no slot, so a writer waiting for the pet does not deadlock with it", () =>
    Effect.scoped(Effect.gen(function*() {
      const url = Redacted.value(yield* freshDatabaseUrl)
      yield* SchemaMigrations.run.pipe(Effect.provide(PostgresClient.layer({
        url: Redacted.make(url),
        poolSize: 1,
        statementTimeout: Duration.seconds(10)
      })))
      const connect = Effect.acquireRelease(
        Effect.promise(async () => {
          const client = new Pg.Client({ connectionString: url })
          await client.connect()
          const pid = (await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid
          return { client, pid }
        }),
        ({ client }) => Effect.promise(() => client.end())
      )
      const winner = yield* connect
      // Two more connections whose backends write the same count slot.
      const bySlot = new Map<number, { client: Pg.Client; pid: number }>()
      let pair: [{ client: Pg.Client; pid: number }, { client: Pg.Client; pid: number }] | undefined
      while (pair === undefined) {
        const next = yield* connect
        const same = bySlot.get(next.pid % 16)
        if (same === undefined) bySlot.set(next.pid % 16, next)
        else pair = [same, next]
      }
      const [loser, writer] = pair
      const run = (connection: { client: Pg.Client }, text: string) => connection.client.query(text)
      const waitingForLock = (pid: number) =>
        Effect.promise(() =>
          run(winner, `SELECT wait_event_type FROM pg_stat_activity WHERE pid = ${pid}`)
        ).pipe(
          Effect.map((result) => result.rows[0]?.wait_event_type === "Lock"),
          Effect.repeat({ until: (waiting) => waiting, schedule: Schedule.spaced("10 millis") }),
          Effect.timeout("5 seconds")
        )
      const [contested, other] = (yield* Effect.promise(() =>
        run(winner, "INSERT INTO pets (name, category_id, status) VALUES ('X', 1, 'available'), ('Y', 1, 'available') RETURNING id")
      )).rows.map((row: { id: string }) => row.id)
      const claim = `UPDATE pets SET status = 'pending' WHERE id = ${contested} AND status = 'available' RETURNING id`

      yield* Effect.promise(() => run(winner, "BEGIN").then(() => run(winner, claim)))
      yield* Effect.promise(() => run(loser, "BEGIN"))
      const lostClaim = run(loser, claim)
      yield* waitingForLock(loser.pid)
      yield* Effect.promise(() => run(writer, "BEGIN").then(() => run(writer, `UPDATE pets SET status = 'sold' WHERE id = ${other}`)))
      yield* Effect.promise(() => run(winner, "COMMIT"))
      const lost = yield* Effect.promise(() => lostClaim).pipe(Effect.timeoutOrElse({
        duration: "5 seconds",
        orElse: () => Effect.die("the lost claim still waits, for the count slot the writer holds")
      }))
      assert.strictEqual(lost.rowCount, 0)
      const writerLocks = run(writer, `SELECT status FROM pets WHERE id = ${contested} FOR UPDATE`)
      yield* waitingForLock(writer.pid)
      yield* Effect.promise(() => run(loser, "COMMIT"))
      assert.deepStrictEqual((yield* Effect.promise(() => writerLocks)).rows, [{ status: "pending" }])
      yield* Effect.promise(() => run(writer, "COMMIT"))
      const counts = yield* Effect.promise(() =>
        run(winner, "SELECT sum(available)::int AS available, sum(pending)::int AS pending, sum(sold)::int AS sold FROM pet_counts")
      )
      assert.deepStrictEqual(counts.rows, [{ available: 0, pending: 1, sold: 1 }])
    })), 30_000)
})
