import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import * as SchemaMigrations from "../../../../src/adapters/postgres/SchemaMigrations.ts"
import { pruneStatement } from "../../../../src/adapters/postgres/webhooks/WebhookRepositorySql.ts"
import { layerFreshDatabase, postgresAvailable } from "../TestDatabase.ts"

interface PlanNode {
  readonly "Node Type": string
  readonly "Relation Name"?: string
  readonly "Actual Rows": number
  readonly "Rows Removed by Filter"?: number
  readonly Plans?: ReadonlyArray<PlanNode>
}

const nodes = (node: PlanNode): Array<PlanNode> => [node, ...(node.Plans ?? []).flatMap(nodes)]

const ROWS = 50_000
const OLD = 10_000
const BATCH = 1000

describe.skipIf(!postgresAvailable)("pruning webhook deliveries on PostgreSQL", () => {
  layer(layerFreshDatabase(), { timeout: 120_000 })((it) => {
    it.effect("a prune reads only the attempts it removes, through the index on attempted_at, and about nothing when none is old", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* SchemaMigrations.run
        const [webhook] = yield* sql<{ id: string }>`
          INSERT INTO webhooks (url, types, created_at, secret)
          VALUES ('https://hooks.example.com/in', '{pet.created}', now(), 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw')
          RETURNING id`
        // 50,000 attempts a minute apart, the first 10,000 before the cutoff.
        const start = new Date("2026-01-01T00:00:00.000Z")
        yield* sql`INSERT INTO webhook_deliveries (webhook_id, event_id, attempt, attempted_at, outcome, http_status, duration_ms)
                   SELECT ${webhook!.id}, g, 1, ${start}::timestamptz + g * interval '1 minute', 'delivered', 204, 1
                   FROM generate_series(1, ${ROWS}) AS g`
        yield* sql`ANALYZE webhook_deliveries`
        const cutoff = new Date(start.getTime() + (OLD + 1) * 60_000)

        const plan = (before: Date) =>
          Effect.gen(function*() {
            const [text, params] = pruneStatement(sql, { before, limit: BATCH }).compile()
            const rows = yield* sql.unsafe<{ "QUERY PLAN": ReadonlyArray<{ Plan: PlanNode }> }>(
              `EXPLAIN (ANALYZE, FORMAT JSON) ${text}`,
              params
            )
            return nodes(rows[0]!["QUERY PLAN"][0]!.Plan)
          })
        const assertBounded = (found: ReadonlyArray<PlanNode>, most: number) => {
          const detail = JSON.stringify(found.map((node) => [node["Node Type"], node["Relation Name"], node["Actual Rows"]]))
          assert.isFalse(found.some((node) => node["Node Type"].includes("Seq Scan")), detail)
          assert.isFalse(found.some((node) => node["Node Type"] === "Sort"), detail)
          for (const node of found) {
            assert.isAtMost(node["Actual Rows"], most, detail)
            assert.isBelow(node["Rows Removed by Filter"] ?? 0, 100, detail)
          }
        }
        // EXPLAIN ANALYZE runs the DELETE: a full batch of the oldest goes.
        assertBounded(yield* plan(cutoff), BATCH)
        const count = () => Effect.map(sql<{ n: string }>`SELECT count(*) AS n FROM webhook_deliveries`, ([row]) => Number(row!.n))
        assert.strictEqual(yield* count(), ROWS - BATCH)
        const [left] = yield* sql<{ oldest: Date }>`SELECT min(attempted_at) AS oldest FROM webhook_deliveries`
        assert.strictEqual(left!.oldest.getTime(), start.getTime() + (BATCH + 1) * 60_000)
        // The rest of the old ones, a batch at a time; then a prune with nothing to do reads nothing.
        for (let i = 1; i < OLD / BATCH; i++) yield* plan(cutoff)
        assert.strictEqual(yield* count(), ROWS - OLD)
        assertBounded(yield* plan(cutoff), 1)
        assert.strictEqual(yield* count(), ROWS - OLD)
      }))
  })
})
