/**
 * The plans of a tag filter, a search and the tags page at 200,000 pets, as EXPLAIN
 * ANALYZE gives them for the adapter's own statements: registered once per SQL store
 * (PostgreSQL server, embedded PGlite).
 */
import { assert, layer } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { SqlClient, type Statement } from "effect/sql"
import * as SchemaMigrations from "../../../src/adapters/postgres/SchemaMigrations.ts"
import * as PetRepositorySql from "../../../src/adapters/postgres/pets/PetRepositorySql.ts"

interface PlanNode {
  readonly "Node Type": string
  readonly "Relation Name"?: string
  readonly "Index Name"?: string
  readonly "Index Cond"?: string
  readonly "Actual Rows": number
  readonly "Actual Loops": number
  readonly Plans?: ReadonlyArray<PlanNode>
}

const nodes = (node: PlanNode): Array<PlanNode> => [node, ...(node.Plans ?? []).flatMap(nodes)]

export const PETS = 200_000
const BATCH = 20_000
// Seeding 200,000 pets takes a minute or more on embedded PGlite.
const TIMEOUT = 600_000

const analyze = (statement: Statement.Statement<unknown>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [text, params] = statement.compile()
    const rows = yield* sql.unsafe<{ "QUERY PLAN": unknown }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, params)
    const json = rows[0]!["QUERY PLAN"]
    const plan = (typeof json === "string" ? JSON.parse(json) : json) as ReadonlyArray<{ Plan: PlanNode }>
    return nodes(plan[0]!.Plan)
  })

// Rows a node handed up over all its loops: what the statement read through it.
const read = (node: PlanNode) => node["Actual Rows"] * node["Actual Loops"]

/**
 * 200,000 pets: every one tagged `common`, one in 1,000 `rare` too; every 2,000th named
 * `Zoë <n>`, the others `pet <n>`. Written in bulk, the tag index and counts filled in one
 * statement each rather than by the per-row trigger (the plan, not the trigger, is under test).
 */
const seed = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* SchemaMigrations.run
  yield* sql`ALTER TABLE pets DISABLE TRIGGER pet_tags_insert`
  // In batches, each well within a test database's statement timeout.
  for (let from = 1; from <= PETS; from += BATCH) {
    yield* sql`INSERT INTO pets (name, category_id, status, tags, name_key)
               SELECT CASE WHEN g % 2000 = 0 THEN 'Zoë ' || g ELSE 'pet ' || g END, g % 7,
                      CASE WHEN g % 2 = 0 THEN 'available' ELSE 'pending' END,
                      CASE WHEN g % 1000 = 0 THEN ARRAY['common', 'rare'] ELSE ARRAY['common'] END,
                      CASE WHEN g % 2000 = 0 THEN 'zoe ' || g ELSE 'pet ' || g END
               FROM generate_series(${from}::int, ${from + BATCH - 1}::int) AS g`
  }
  yield* sql`ALTER TABLE pets ENABLE TRIGGER pet_tags_insert`
  for (let from = 1; from <= PETS; from += BATCH) {
    yield* sql`INSERT INTO pet_tags (tag, pet_id) SELECT unnest(tags), id FROM pets WHERE id BETWEEN ${from} AND ${from + BATCH - 1}`
  }
  yield* sql`INSERT INTO tag_counts (tag, slot, pets) SELECT tag, 0, count(*) FROM pet_tags GROUP BY tag`
  yield* sql`ANALYZE pets`
  yield* sql`ANALYZE pet_tags`
  yield* sql`ANALYZE tag_counts`
})

const page = (query: { readonly after?: bigint; readonly tags?: ReadonlyArray<string>; readonly q?: string; readonly status?: string }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* analyze(PetRepositorySql.pageStatement(sql, {
      after: query.after ?? 0n,
      limit: 21,
      status: query.status ?? null,
      tags: query.tags,
      q: query.q
    }))
  })

export const tagSearchPlans = (name: string, store: Layer.Layer<SqlClient.SqlClient, unknown>) =>
  layer(store, { timeout: TIMEOUT })(`tag and search plans at ${PETS} pets: ${name}`, (it) => {
    it.effect("a tag page walks the tag's index from the cursor, a common tag as cheaply as a rare one", () =>
      Effect.gen(function*() {
        yield* seed
        for (const query of [{ tags: ["common"], after: 150_000n }, { tags: ["rare"] }, { tags: ["common"], status: "pending" }]) {
          const plan = yield* page(query)
          const detail = `${JSON.stringify({ ...query, after: String(query.after) })}: ${JSON.stringify(plan)}`
          assert.isFalse(plan.some((node) => node["Node Type"].includes("Seq Scan")), detail)
          const walk = plan.find((node) => node["Relation Name"] === "pet_tags")
          assert.isDefined(walk, detail)
          assert.match(walk!["Node Type"], /^Index/, detail)
          assert.match(walk!["Index Cond"] ?? "", /tag = .*pet_id > /, detail)
          // About one page of entries (twice that with a status every other pet has), never the tag's 200,000.
          for (const node of plan) assert.isAtMost(read(node), 60, detail)
        }
      }), TIMEOUT)

    it.effect("a search reads the trigram index, not the pets", () =>
      Effect.gen(function*() {
        for (const q of ["zoe", "ZOË 1"]) {
          const plan = yield* page({ q })
          const detail = `${q}: ${JSON.stringify(plan)}`
          assert.isFalse(plan.some((node) => node["Node Type"].includes("Seq Scan")), detail)
          assert.isTrue(plan.some((node) => node["Index Name"] === "pets_name_key_trgm"), detail)
          for (const node of plan) assert.isAtMost(read(node), 200, detail)
        }
      }), TIMEOUT)

    it.effect("the tags page reads the kept counts, not the pets", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const plan = yield* analyze(PetRepositorySql.tagsStatement(sql, { after: "", limit: 21 }))
        const detail = JSON.stringify(plan)
        assert.isFalse(plan.some((node) => node["Relation Name"] === "pets" || node["Relation Name"] === "pet_tags"), detail)
      }), TIMEOUT)
  })
