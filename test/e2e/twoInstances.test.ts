/**
 * Several service processes on one PostgreSQL database, started at the same
 * instant on a database nobody has migrated: the migrations run once, and
 * writes through either instance are readable through the other.
 */
import { Effect } from "effect"
import * as SchemaMigrations from "../../src/adapters/postgres/SchemaMigrations.ts"
import { describe, expect, it } from "vitest"
import { createDatabase, databaseUrl, postgresAvailable, query } from "./PgAdmin.ts"
import { createPet, listAll, mapConcurrent, newPet, type PetJson, startService } from "./ServiceProcess.ts"
import { cleanUpProcesses } from "./Cleanup.ts"

const API_KEY = "two-instances-key"

cleanUpProcesses()

const startTogether = async (count: number, database: string) => {
  const env = { API_KEYS: API_KEY, STORE: "postgres", DATABASE_URL: databaseUrl(database) }
  return Promise.all(Array.from({ length: count }, () => startService({ env })))
}

// Every migration the release knows, as the migrator records it.
const ALL_MIGRATIONS = (await Effect.runPromise(SchemaMigrations.loader)).map(([migration_id, name]) => ({ migration_id, name }))

const migrationRows = (database: string) =>
  query<{ migration_id: number; name: string }>(
    database,
    "SELECT migration_id, name FROM animal_store_migrations ORDER BY migration_id"
  )

describe.skipIf(!postgresAvailable)("instances sharing one PostgreSQL database", () => {
  it("two started at once both serve; 500 concurrent creates across both give 500 distinct ids readable from either", async () => {
    const database = await createDatabase()
    const instances = await startTogether(2, database)
    const [a, b] = instances
    if (a === undefined || b === undefined) throw new Error("two instances expected")
    for (const instance of instances) expect((await instance.request("GET", "/readyz")).status).toBe(200)

    const startedAt = performance.now()
    const created = await Promise.all(
      Array.from({ length: 500 }, (_, i) => createPet(i % 2 === 0 ? a : b, API_KEY, newPet(i, `inst${i % 2}`)))
    )
    const createMs = performance.now() - startedAt
    const ids = created.map((pet) => pet.id)
    expect(new Set(ids).size).toBe(500)

    // Every pet, by id, from both instances.
    const reads = await mapConcurrent(
      created.flatMap((pet) => [[a, pet], [b, pet]] as const),
      32,
      async ([instance, pet]) => {
        const result = await instance.request("GET", `/v1/pets/${pet.id}`, { apiKey: API_KEY })
        return result.status === 200 && JSON.stringify(result.json) === JSON.stringify(pet) ? undefined : { pet, result }
      }
    )
    expect(reads.filter((read) => read !== undefined)).toEqual([])

    const expected: Array<PetJson> = [...created].sort((x, y) => x.id - y.id)
    expect((await listAll(a, API_KEY, { limit: 100 })).pets).toEqual(expected)
    expect((await listAll(b, API_KEY, { limit: 100 })).pets).toEqual(expected)

    // The migrations ran exactly once.
    expect(await migrationRows(database)).toEqual(ALL_MIGRATIONS)
    expect(await query<{ count: string }>(database, "SELECT count(*)::text AS count FROM pets")).toEqual([{ count: "500" }])

    for (const instance of instances) {
      expect(await instance.stop()).toEqual({ code: 0, signal: null })
      expect(instance.stderr).toBe("")
    }
    console.info(
      `[two instances] started at once in ${a.listeningAfterMs} / ${b.listeningAfterMs} ms; ` +
        `500 concurrent creates in ${createMs.toFixed(0)} ms`
    )
  }, 90_000)

  it("50 concurrent orders for one pet across two instances: exactly one 201, 49 409 pet_not_available", async () => {
    const database = await createDatabase()
    const [a, b] = await startTogether(2, database)
    if (a === undefined || b === undefined) throw new Error("two instances expected")
    const pet = await createPet(a, API_KEY, { name: "Contested", categoryId: 1, status: "available" })
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        (i % 2 === 0 ? a : b).request("POST", "/v1/store/orders", { apiKey: API_KEY, body: { petId: pet.id } }))
    )
    const statuses = answers.map((answer) => answer.status)
    expect(answers.filter((answer) => answer.status !== 201 && answer.status !== 409)).toEqual([])
    expect(statuses.filter((status) => status === 201)).toHaveLength(1)
    expect(statuses.filter((status) => status === 409)).toHaveLength(49)
    for (const answer of answers.filter((answer) => answer.status === 409)) {
      expect((answer.json as { code: string }).code).toBe("pet_not_available")
    }
    expect((await b.request("GET", `/v1/pets/${pet.id}`, { apiKey: API_KEY })).json).toMatchObject({ status: "pending" })
    expect(await query<{ count: string }>(database, "SELECT count(*)::text AS count FROM orders")).toEqual([{ count: "1" }])
    for (const instance of [a, b]) expect(await instance.stop()).toEqual({ code: 0, signal: null })
  }, 90_000)

  it("50 concurrent PATCHes with the same If-Match across two instances: exactly one 200, 49 412 precondition_failed", async () => {
    const database = await createDatabase()
    const [a, b] = await startTogether(2, database)
    if (a === undefined || b === undefined) throw new Error("two instances expected")
    const pet = await createPet(a, API_KEY, { name: "Contested", categoryId: 1, status: "available" })
    const etag = (await b.request("GET", `/v1/pets/${pet.id}`, { apiKey: API_KEY })).headers.get("etag")!
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        (i % 2 === 0 ? a : b).request("PATCH", `/v1/pets/${pet.id}`, {
          apiKey: API_KEY,
          body: { name: `racer ${i}` },
          headers: { "content-type": "application/merge-patch+json", "if-match": etag }
        }))
    )
    expect(answers.filter((answer) => answer.status !== 200 && answer.status !== 412)).toEqual([])
    const applied = answers.filter((answer) => answer.status === 200)
    expect(applied).toHaveLength(1)
    for (const answer of answers.filter((answer) => answer.status === 412)) {
      expect((answer.json as { code: string }).code).toBe("precondition_failed")
    }
    const read = await a.request("GET", `/v1/pets/${pet.id}`, { apiKey: API_KEY })
    expect(read.json).toEqual(applied[0]!.json)
    expect(read.headers.get("etag")).toBe(applied[0]!.headers.get("etag"))
    for (const instance of [a, b]) expect(await instance.stop()).toEqual({ code: 0, signal: null })
  }, 90_000)

  it("three started at once on a fresh database, twice over: all serve, migrations recorded once", async () => {
    for (let round = 0; round < 2; round++) {
      const database = await createDatabase()
      const instances = await startTogether(3, database)
      for (const instance of instances) {
        expect(instance.exitStatus, instance.output).toBeUndefined()
        expect((await instance.request("GET", "/readyz")).status).toBe(200)
      }
      const pets = await Promise.all(instances.map((instance, i) => createPet(instance, API_KEY, newPet(i))))
      expect(new Set(pets.map((pet) => pet.id)).size).toBe(3)
      expect(await migrationRows(database)).toEqual(ALL_MIGRATIONS)
      for (const instance of instances) expect(await instance.stop()).toEqual({ code: 0, signal: null })
    }
  }, 90_000)
})
