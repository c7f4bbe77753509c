import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { Migrator, SqlClient } from "effect/sql"
import * as PetMigrations from "../../../src/adapters/postgres/PetMigrations.ts"
import { layerFreshDatabase, postgresAvailable } from "./TestDatabase.ts"

// The first shipped migration alone: what a database from the first release holds.
const firstRelease = Migrator.make({})({
  loader: Effect.map(PetMigrations.loader, (migrations) => migrations.filter(([id]) => id === 1)),
  table: PetMigrations.MIGRATIONS_TABLE
})

describe.skipIf(!postgresAvailable)("PetMigrations on a PostgreSQL server", () => {
  layer(layerFreshDatabase({ maxConnections: 1 }))((it) => {
    it.effect("a database of the first release upgrades in place, keeping its pets", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* firstRelease
        yield* sql`INSERT INTO pets (name, category_id, status) VALUES ('Rex', 9007199254740993, 'sold'), ('\u0085', 1, NULL)`
        const applied = yield* PetMigrations.run
        assert.deepStrictEqual(applied.map(([id]) => id), [2])
        const rows = yield* sql<{ name: string; category_id: bigint }>`SELECT name, category_id FROM pets ORDER BY id`
        assert.deepStrictEqual(rows.map((row) => [row.name, row.category_id]), [["Rex", 9007199254740993n], ["\u0085", 1n]])
        // The new rule holds: a name of ECMAScript white space only is refused by the database too.
        const refused = yield* Effect.flip(sql`INSERT INTO pets (name, category_id) VALUES (${"\u3000\ufeff"}, 1)`)
        assert.strictEqual(refused._tag, "SqlError")
        assert.deepStrictEqual(yield* PetMigrations.run, [])
      }))
  })
})
