/**
 * Search at scale: 200,000 pets on PostgreSQL and on the embedded database, then the
 * repository's `get` of random ids against its `list` with `q` (a name search, through the
 * pg_trgm index) and with a `tag`, one call at a time, in process. Target: a search's
 * median within 5x a get's.
 *
 * Names are `<word> <n>` over eight words, one accented (`Zoë`), so a word matches one pet
 * in eight and `<word> <n>` a handful; every tenth pet is tagged `young`. The searches
 * cycle through a common word, a word with its number (few matches), and text no name holds.
 */
import { Duration, Effect, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { mkdtempSync, rmSync } from "node:fs"
import { join } from "node:path"
import * as EmbeddedDatabase from "../src/adapters/embedded/EmbeddedDatabase.ts"
import * as PostgresClient from "../src/adapters/postgres/PostgresClient.ts"
import * as PetRepositorySql from "../src/adapters/postgres/pets/PetRepositorySql.ts"
import { PetId } from "../src/domain/pets/PetId.ts"
import { searchKey, SearchText } from "../src/domain/pets/PetSearch.ts"
import { PetTag } from "../src/domain/pets/PetTag.ts"
import { PetRepository } from "../src/ports/pets/PetRepository.ts"
import { fmt, median, percentile, sortedCopy } from "./lib.ts"
import { createDatabase, dropDatabase } from "./pg-admin.ts"
import type { Report } from "./report.ts"
import { mulberry32 } from "../test/e2e/Mulberry32.ts"

export interface SearchOptions {
  readonly report: Report
  readonly work: string
  /** Admin URL of the local PostgreSQL server, or undefined to leave PostgreSQL out. */
  readonly pgUrl: string | undefined
}

const PETS = 200_000
const BATCH = 10_000
const CALLS = 400
const BOUND = 5
const WORDS = ["Zoë", "Rex", "Tabby", "Milo", "Luna", "Bella", "Oscar", "Coco"]

const nameOf = (n: number) => `${WORDS[n % WORDS.length]} ${n}`

// Pets written in batches, names and their search keys made here (the adapter's normalization).
const seed = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  for (let from = 1; from <= PETS; from += BATCH) {
    const numbers = Array.from({ length: Math.min(BATCH, PETS - from + 1) }, (_, i) => from + i)
    yield* sql`INSERT INTO pets (name, category_id, status, tags, name_key)
               SELECT name, n % 7, 'available', CASE WHEN n % 10 = 0 THEN ARRAY['young'] ELSE '{}'::text[] END, name_key
               FROM unnest(${numbers}::int[], ${numbers.map(nameOf)}::text[], ${numbers.map((n) => searchKey(nameOf(n)))}::text[])
                 AS s (n, name, name_key)`
  }
  yield* sql`ANALYZE pets`
  yield* sql`ANALYZE pet_tags`
})

interface Timings {
  readonly get: ReadonlyArray<number>
  readonly search: ReadonlyArray<number>
  readonly tag: ReadonlyArray<number>
}

const timed = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const started = performance.now()
    yield* effect
    return performance.now() - started
  })

const measure = Effect.gen(function*() {
  const repo = yield* PetRepository
  yield* seed
  const random = mulberry32(7)
  const queries = Array.from({ length: CALLS }, (_, i) => {
    const n = 1 + Math.floor(random() * PETS)
    return [WORDS[n % WORDS.length]!.toLowerCase(), nameOf(n), "no such pet"][i % 3]!
  })
  const get: Array<number> = []
  const search: Array<number> = []
  const tag: Array<number> = []
  // Interleaved, so the two sides see the same machine.
  for (let i = 0; i < CALLS; i++) {
    get.push(yield* timed(repo.get(PetId.make(BigInt(1 + Math.floor(random() * PETS))))))
    search.push(yield* timed(repo.list({ limit: 21, q: SearchText.make(queries[i]!) })))
    tag.push(yield* timed(repo.list({ limit: 21, tags: [PetTag.make("young")], after: PetId.make(BigInt(Math.floor(random() * PETS))) })))
  }
  return { get, search, tag } satisfies Timings
})

export const searchSection = async (options: SearchOptions) => {
  const { report } = options
  report.heading(`Search at ${PETS.toLocaleString("en")} pets (repository calls in process, one at a time)`)
  report.say(`   ${CALLS} gets of random ids, ${CALLS} searches (a common word, a word and its number, text no name holds),`)
  report.say(`   ${CALLS} pages of a tag one pet in ten carries; target: the search's median within ${BOUND}x the get's.`)
  const rows: Array<ReadonlyArray<string>> = []
  const results: Record<string, unknown> = {}
  const run = async (store: string, client: Layer.Layer<SqlClient.SqlClient, unknown>) => {
    report.say(`   running ${store} ...`)
    const stores = PetRepositorySql.layer({ timeout: "30 seconds" }).pipe(Layer.provideMerge(client))
    const timings = await Effect.runPromise(measure.pipe(Effect.provide(stores), Effect.scoped))
    const [get, search, tag] = [sortedCopy(timings.get), sortedCopy(timings.search), sortedCopy(timings.tag)]
    const ratio = median(search) / median(get)
    results[store] = { getMs: median(get), searchMs: median(search), tagMs: median(tag), ratio, met: ratio <= BOUND }
    rows.push([
      store,
      `${fmt(median(get))} / ${fmt(percentile(get, 99))}`,
      `${fmt(median(search))} / ${fmt(percentile(search, 99))}`,
      `${fmt(median(tag))} / ${fmt(percentile(tag, 99))}`,
      `${ratio.toFixed(1)}x`,
      ratio <= BOUND ? "met" : "not met"
    ])
  }
  if (options.pgUrl !== undefined) {
    const database = await createDatabase(options.pgUrl, "search")
    try {
      await run("postgres", PostgresClient.layer({ url: Redacted.make(database.url), poolSize: 2, statementTimeout: Duration.seconds(30) }))
    } finally {
      await dropDatabase(options.pgUrl, database.name)
    }
  }
  const dataDir = mkdtempSync(join(options.work, "search-embedded-"))
  try {
    await run("embedded", EmbeddedDatabase.layer({ dataDir }))
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
  report.table(["store", "get ms (median / p99)", "search ms", "tag page ms", "search / get", `within ${BOUND}x`], rows)
  return results
}
