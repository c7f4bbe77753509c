/**
 * Child process: PetRepository throughput for one adapter against a reference doing
 * the same work without the adapter.
 *
 * - memory: the adapter vs a plain Map + arrays with the same indexes and keyset logic.
 * - embedded / postgres: the adapter vs the same SQL statements sent through the same
 *   @effect/sql-pg client (no schema encode/decode, no spans, no timeout race).
 *
 * Usage (from bench/run.ts): node bench/repository.ts '<json RepositoryArgs>'
 * Writes a RepositoryResult as JSON to args.resultPath.
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { writeFileSync } from "node:fs"
import * as EmbeddedDatabase from "../src/adapters/embedded/EmbeddedDatabase.ts"
import * as PetRepositoryMemory from "../src/adapters/memory/pets/PetRepositoryMemory.ts"
import { EventSequencer } from "../src/adapters/postgres/events/EventSequencer.ts"
import * as Migrations from "../src/adapters/postgres/Migrations.ts"
import * as PetRepositorySql from "../src/adapters/postgres/pets/PetRepositorySql.ts"
import { CategoryId } from "../src/domain/pets/CategoryId.ts"
import { NewPet } from "../src/domain/pets/NewPet.ts"
import { Pet } from "../src/domain/pets/Pet.ts"
import { FIRST_VERSION } from "../src/domain/pets/PetVersion.ts"
import { PetId } from "../src/domain/pets/PetId.ts"
import type { PetQuery } from "../src/domain/pets/PetQuery.ts"
import { PetName } from "../src/domain/pets/PetName.ts"
import { PetStatus as PetStatusSchema } from "../src/domain/pets/PetStatus.ts"
import type { PetStatus } from "../src/domain/pets/PetStatus.ts"
import type { PetRepository } from "../src/ports/pets/PetRepository.ts"
import { type Chunk, type Comparison, compare, effectChunk, syncChunk } from "./compare.ts"
import { STATUSES } from "./lib.ts"
import { firstAfter } from "./keyset.ts"
import { runChildMain } from "./child-main.ts"
import { mulberry32 } from "../test/e2e/Mulberry32.ts"

export interface RepositoryArgs {
  readonly adapter: "memory" | "embedded" | "postgres"
  readonly resultPath: string
  /** Operation counts per side. */
  readonly creates: number
  readonly gets: number
  readonly pages: number
  /** Wall-time budget per operation kind (both sides together), in milliseconds. */
  readonly budgetMs: number
  /** embedded: the (empty, temporary) data directory. */
  readonly dataDir?: string
  /** postgres: URL of a server database from which a throwaway database is created. */
  readonly adminUrl?: string
  /** postgres: name of the throwaway database (created, then dropped). */
  readonly database?: string
}

export interface RepositoryRow extends Comparison {
  readonly adapter: string
  readonly op: string
  /** How many passes the reference timing averaged over (see syncChunk). */
  readonly referenceRepeat: number
  /** Rows returned per call by subject / reference (list sanity check). */
  readonly subjectRows?: number
  readonly referenceRows?: number
}

export interface RepositoryResult {
  readonly adapter: string
  readonly rows: ReadonlyArray<RepositoryRow>
  readonly setupMs: number
  readonly notes: ReadonlyArray<string>
}

const args = JSON.parse(process.argv[2] ?? "{}") as RepositoryArgs
const ROUNDS = 10
const LIMIT = 20

interface Input {
  readonly name: string
  readonly categoryId: bigint
  readonly status: PetStatus | undefined
}

// The same inputs for both sides: distinct names, a few categories, statuses in rotation.
const inputs: ReadonlyArray<Input> = Array.from({ length: args.creates + 1_000 }, (_, i) => ({
  name: `Pet ${i} ${"abcdefghij".slice(0, i % 10)}`,
  categoryId: BigInt(1 + (i % 7)),
  status: STATUSES[i % STATUSES.length]
}))
const decodeNewPet = Schema.decodeUnknownSync(NewPet)
// What the HTTP handler hands the repository: an already validated NewPet.
const newPets: ReadonlyArray<NewPet> = inputs.map((input) =>
  decodeNewPet(input.status === undefined ? { name: input.name, categoryId: input.categoryId } : input)
)
const inputAt = (i: number): Input => inputs[i % inputs.length]!
const newPetAt = (i: number): NewPet => newPets[i % newPets.length]!

/** Pseudo-random ids in [1, maxId], the same sequence for both sides. */
const idSequence = (count: number, maxId: number): ReadonlyArray<bigint> => {
  const random = mulberry32(42)
  return Array.from({ length: count }, () => BigInt(1 + Math.floor(random() * maxId)))
}

const WARMUP = 200
// The plain-JS references are 10-100x faster than the adapter: repeat their (side-effect
// free) passes so that each round's reference time is not a fraction of a millisecond.
const REF_REPEAT = 10
const LIST_REF_REPEAT = 20

/** Runs a warm-up chunk for both sides (unmeasured), then the interleaved comparison. */
const measure = (
  op: string,
  total: number,
  subject: Chunk,
  reference: Chunk,
  extra: {
    readonly warmupFrom?: number
    readonly referenceRepeat?: number
    readonly subjectRows?: number
    readonly referenceRows?: number
  } = {}
) =>
  Effect.gen(function*() {
    const warm = Math.min(WARMUP, Math.max(1, Math.floor(total / 10)))
    yield* subject(extra.warmupFrom ?? 0, warm)
    yield* reference(extra.warmupFrom ?? 0, warm)
    const result = yield* compare({ total, rounds: ROUNDS, budgetMs: args.budgetMs, subject, reference })
    const row: RepositoryRow = {
      adapter: args.adapter,
      op,
      ...result,
      referenceRepeat: extra.referenceRepeat ?? 1,
      ...(extra.subjectRows === undefined ? {} : { subjectRows: extra.subjectRows }),
      ...(extra.referenceRows === undefined ? {} : { referenceRows: extra.referenceRows })
    }
    return row
  })

interface PageCase {
  readonly op: string
  readonly status: PetStatus | undefined
  /** How far below the largest id the keyset cursor sits; undefined: first page. */
  readonly depth: number | undefined
}

const PAGE_CASES: ReadonlyArray<PageCase> = [
  { op: "list first page", status: undefined, depth: undefined },
  { op: "list deep page", status: undefined, depth: 40 },
  { op: "list first page status=sold", status: "sold", depth: undefined },
  // A quarter of the pets are sold: 200 ids below the end hold about 50 of them.
  { op: "list deep page status=sold", status: "sold", depth: 200 }
]

// ---------------------------------------------------------------------------------------
// memory

interface PlainPet {
  readonly id: bigint
  readonly name: string
  readonly categoryId: bigint
  readonly status?: PetStatus
}

const makePlainStore = () => {
  const all: Array<PlainPet> = []
  const byId = new Map<bigint, PlainPet>()
  const byStatus = new Map<PetStatus, Array<PlainPet>>()
  let lastId = 0n
  return {
    create: (input: Input): PlainPet => {
      lastId += 1n
      const pet: PlainPet = input.status === undefined
        ? { id: lastId, name: input.name, categoryId: input.categoryId }
        : { id: lastId, name: input.name, categoryId: input.categoryId, status: input.status }
      all.push(pet)
      byId.set(pet.id, pet)
      if (pet.status !== undefined) {
        const bucket = byStatus.get(pet.status)
        if (bucket === undefined) byStatus.set(pet.status, [pet])
        else bucket.push(pet)
      }
      return pet
    },
    get: (id: bigint): PlainPet | undefined => byId.get(id),
    list: (limit: number, status: PetStatus | undefined, after: bigint | undefined): Array<PlainPet> => {
      const source = status === undefined ? all : byStatus.get(status) ?? []
      const start = firstAfter(source, after)
      return source.slice(start, start + limit)
    },
    size: () => all.length
  }
}

const memoryBench = Effect.gen(function*() {
  const repo = yield* PetRepositoryMemory.make
  const plain = makePlainStore()
  const rows: Array<RepositoryRow> = []

  rows.push(
    yield* measure(
      "create",
      args.creates,
      effectChunk((i) => repo.create(newPetAt(i))),
      syncChunk((i) => plain.create(inputAt(i)))
    )
  )
  const maxId = plain.size()
  const ids = idSequence(args.gets + WARMUP, maxId)
  rows.push(
    yield* measure(
      "get by id",
      args.gets,
      effectChunk((i) => repo.get(PetId.make(ids[i % ids.length]!))),
      syncChunk((i) => plain.get(ids[i % ids.length]!), REF_REPEAT),
      { referenceRepeat: REF_REPEAT }
    )
  )
  // Diagnostics: where a create's and a get's cost goes.
  rows.push(
    yield* measure(
      "diag: new Pet(...) vs object literal",
      args.creates,
      syncChunk((i) => new Pet({ ...newPetAt(i), id: PetId.make(BigInt(i + 1)), version: FIRST_VERSION })),
      syncChunk((i) => ({ ...inputAt(i), id: BigInt(i + 1) }), REF_REPEAT),
      { referenceRepeat: REF_REPEAT }
    )
  )
  const map = new Map<bigint, Input>(ids.map((id, i) => [id, inputAt(i)]))
  const fnGet = Effect.fn("diag.get")((id: bigint) => Effect.sync(() => map.get(id)))
  rows.push(
    yield* measure(
      "diag: Effect.sync vs Map.get",
      args.gets,
      effectChunk((i) => Effect.sync(() => map.get(ids[i % ids.length]!))),
      syncChunk((i) => map.get(ids[i % ids.length]!), REF_REPEAT),
      { referenceRepeat: REF_REPEAT }
    )
  )
  rows.push(
    yield* measure(
      "diag: Effect.fn(span)+sync vs Map.get",
      args.gets,
      effectChunk((i) => fnGet(ids[i % ids.length]!)),
      syncChunk((i) => map.get(ids[i % ids.length]!), REF_REPEAT),
      { referenceRepeat: REF_REPEAT }
    )
  )
  for (const page of PAGE_CASES) {
    const after = page.depth === undefined ? undefined : BigInt(maxId - page.depth)
    const query: PetQuery = {
      limit: LIMIT,
      status: page.status,
      after: after === undefined ? undefined : PetId.make(after)
    }
    const subjectRows = (yield* repo.list(query)).length
    const referenceRows = plain.list(LIMIT, page.status, after).length
    rows.push(
      yield* measure(
        page.op,
        args.pages,
        effectChunk(() => repo.list(query)),
        syncChunk(() => plain.list(LIMIT, page.status, after), LIST_REF_REPEAT),
        { subjectRows, referenceRows, referenceRepeat: LIST_REF_REPEAT }
      )
    )
  }
  return rows
})

// ---------------------------------------------------------------------------------------
// SQL (embedded PGlite or PostgreSQL server)

// The adapter's row schema (not exported by it), for the decode-only diagnostic.
const DiagPetRow = Schema.Struct({
  id: PetId,
  name: PetName,
  category_id: CategoryId,
  status: Schema.NullOr(PetStatusSchema)
})

const sqlBench = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // The production default of DATABASE_STATEMENT_TIMEOUT.
  const repo: PetRepository["Service"] = yield* PetRepositorySql.make({ timeout: "5 seconds" })
  const rows: Array<RepositoryRow> = []

  // The statements the adapter sends, sent directly. Results are left as raw rows.
  const insertRaw = (input: Input) =>
    sql`INSERT INTO pets (name, category_id, status)
        VALUES (${input.name}, ${input.categoryId}, ${input.status ?? null})
        RETURNING id, name, category_id, status`
  const byIdRaw = (id: bigint) => sql`SELECT id, name, category_id, status FROM pets WHERE id = ${id}`
  const pageRaw = (limit: number, status: PetStatus | undefined, after: bigint) =>
    status === undefined
      ? sql`SELECT id, name, category_id, status FROM pets
            WHERE id > ${after} ORDER BY id LIMIT ${limit}`
      : sql`SELECT id, name, category_id, status FROM pets
            WHERE status = ${status} AND id > ${after} ORDER BY id LIMIT ${limit}`

  // Both sides insert into the same table, alternating in rounds.
  rows.push(
    yield* measure(
      "create",
      args.creates,
      effectChunk((i) => repo.create(newPetAt(i))),
      effectChunk((i) => insertRaw(inputAt(i))),
      { warmupFrom: args.creates }
    )
  )
  const [stats] = yield* sql<{ readonly max: bigint | number | string }>`SELECT max(id) AS max FROM pets`
  const maxId = Number(stats?.max ?? 0)
  const ids = idSequence(args.gets + WARMUP, maxId)
  rows.push(
    yield* measure(
      "get by id",
      args.gets,
      effectChunk((i) => repo.get(PetId.make(ids[i % ids.length]!))),
      effectChunk((i) => byIdRaw(ids[i % ids.length]!))
    )
  )
  // Diagnostics: the adapter's get, one ingredient at a time, against the raw statement.
  const diagCount = Math.min(args.gets, 1_000)
  const byIdDecoded = SqlSchema.findAll({ Request: Schema.BigInt, Result: DiagPetRow, execute: byIdRaw })
  rows.push(
    yield* measure(
      "diag: raw get + SqlSchema encode/decode",
      diagCount,
      effectChunk((i) => byIdDecoded(ids[i % ids.length]!)),
      effectChunk((i) => byIdRaw(ids[i % ids.length]!))
    )
  )
  rows.push(
    yield* measure(
      "diag: raw get + timeoutOrElse(5 s)",
      diagCount,
      effectChunk((i) =>
        byIdRaw(ids[i % ids.length]!).pipe(
          Effect.timeoutOrElse({ duration: "5 seconds", orElse: () => Effect.fail("timeout" as const) })
        )
      ),
      effectChunk((i) => byIdRaw(ids[i % ids.length]!))
    )
  )
  for (const page of PAGE_CASES) {
    const after = page.depth === undefined ? undefined : BigInt(maxId - page.depth)
    const query: PetQuery = {
      limit: LIMIT,
      status: page.status,
      after: after === undefined ? undefined : PetId.make(after)
    }
    const subjectRows = (yield* repo.list(query)).length
    const referenceRows = (yield* pageRaw(LIMIT, page.status, after ?? 0n)).length
    rows.push(
      yield* measure(
        page.op,
        args.pages,
        effectChunk(() => repo.list(query)),
        effectChunk(() => pageRaw(LIMIT, page.status, after ?? 0n)),
        { subjectRows, referenceRows }
      )
    )
  }
  return rows
  // The sequencer numbers the events for the whole bench, as in the service.
}).pipe(Effect.provide(Layer.merge(Migrations.layer, EventSequencer.layer)))

/** A throwaway database on the server, dropped when the scope closes (also on SIGTERM). */
const freshDatabaseLayer = (adminUrl: string, database: string) =>
  Layer.unwrap(Effect.gen(function*() {
    const admin = PgClient.layer({ url: Redacted.make(adminUrl), maxConnections: 1 })
    yield* Effect.acquireRelease(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql`CREATE DATABASE ${sql(database)}`).pipe(Effect.provide(admin)),
      () =>
        Effect.flatMap(SqlClient.SqlClient, (sql) => sql`DROP DATABASE IF EXISTS ${sql(database)} WITH (FORCE)`).pipe(
          Effect.provide(admin),
          Effect.ignore
        )
    )
    const url = new URL(adminUrl)
    url.pathname = `/${database}`
    return PgClient.layer({ url: Redacted.make(url.toString()), maxConnections: 4 })
  }))

const main = Effect.gen(function*() {
  const started = performance.now()
  const notes: Array<string> = []
  let rows: ReadonlyArray<RepositoryRow>
  switch (args.adapter) {
    case "memory":
      rows = yield* memoryBench
      break
    case "embedded": {
      if (args.dataDir === undefined) return yield* Effect.die("embedded needs dataDir")
      const opened = performance.now()
      rows = yield* sqlBench.pipe(Effect.provide(EmbeddedDatabase.layer({ dataDir: args.dataDir })))
      notes.push(`PGlite in a fresh temp dir: initdb + migrations + measurements took ${
        Math.round(performance.now() - opened)
      } ms`)
      break
    }
    case "postgres": {
      if (args.adminUrl === undefined || args.database === undefined) {
        return yield* Effect.die("postgres needs adminUrl and database")
      }
      rows = yield* sqlBench.pipe(Effect.provide(freshDatabaseLayer(args.adminUrl, args.database)))
      break
    }
  }
  const result: RepositoryResult = {
    adapter: args.adapter,
    rows,
    setupMs: Math.round(performance.now() - started),
    notes
  }
  writeFileSync(args.resultPath, JSON.stringify(result, null, 2))
}).pipe(Effect.scoped)

runChildMain(`repository bench (${args.adapter})`, main)
