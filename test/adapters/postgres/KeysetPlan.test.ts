import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import * as PetMigrations from "../../../src/adapters/postgres/PetMigrations.ts"
import { pageStatement } from "../../../src/adapters/postgres/PetRepositorySql.ts"
import { layerFreshDatabase, postgresAvailable } from "./TestDatabase.ts"

interface PlanNode {
  readonly "Node Type": string
  readonly "Index Cond"?: string
  readonly "Actual Rows": number
  readonly "Rows Removed by Filter"?: number
  readonly Plans?: ReadonlyArray<PlanNode>
}

const nodes = (node: PlanNode): Array<PlanNode> => [node, ...(node.Plans ?? []).flatMap(nodes)]

const ROWS = 50_000

describe.skipIf(!postgresAvailable)("keyset pages on PostgreSQL", () => {
  layer(layerFreshDatabase(), { timeout: 120_000 })((it) => {
    const explain = (page: { readonly after: bigint; readonly limit: number; readonly status: string | null }) =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const [text, params] = pageStatement(sql, page).compile()
        const rows = yield* sql.unsafe<{ "QUERY PLAN": ReadonlyArray<{ Plan: PlanNode }> }>(
          `EXPLAIN (ANALYZE, FORMAT JSON) ${text}`,
          params
        )
        return nodes(rows[0]!["QUERY PLAN"][0]!.Plan)
      })

    it.effect("a deep page reads only its own rows, through an index", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* PetMigrations.run
        yield* sql`INSERT INTO pets (name, category_id, status)
                   SELECT 'pet ' || g, g,
                          CASE WHEN g % 100 = 0 THEN 'sold' WHEN g % 2 = 0 THEN 'available' ELSE 'pending' END
                   FROM generate_series(1, ${ROWS}) AS g`
        yield* sql`ANALYZE pets`

        // A common status, a rare one (1 in 100) and no filter, each 40,000 rows deep.
        for (const status of [null, "pending", "sold"]) {
          const plan = yield* explain({ after: BigInt(ROWS - 10_000), limit: 21, status })
          const context = `${status}: ${JSON.stringify(plan)}`
          assert.isFalse(plan.some((node) => node["Node Type"].includes("Seq Scan")), context)
          const scan = plan.find((node) => node["Node Type"].startsWith("Index"))
          assert.isDefined(scan, context)
          // Keyset: the index scan starts at the cursor...
          assert.match(scan!["Index Cond"] ?? "", /id > /, context)
          // ...so it reads about one page, not the 40,000 rows before it.
          assert.strictEqual(scan!["Actual Rows"], 21, context)
          assert.isBelow(scan!["Rows Removed by Filter"] ?? 0, 100, context)
        }
      }))
  })
})
