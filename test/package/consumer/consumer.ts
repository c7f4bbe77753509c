// A service that embeds Animal Store, written only against the package's public entry
// points. The package test installs the packed tarball next to this file, typechecks and
// runs it. docs/embedding.md shows the same three uses; the fourth is the embedded store.
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { ApiKeysStatic } from "animal-store/apikeys"
import { AnimalStoreClient } from "animal-store/client"
import { CategoryId, NewPet, PetId, PetName } from "animal-store/domain"
import { EmbeddedDatabase } from "animal-store/embedded"
import { HttpApp } from "animal-store/http/server"
import { PetRepositoryMemory, StoreMemory } from "animal-store/memory"
import { PetRepository } from "animal-store/ports"
import { Effect, Layer, Redacted } from "effect"
import { FetchHttpClient, HttpRouter, HttpServer, HttpServerResponse } from "effect/http"
import { SqlClient } from "effect/sql"
import { strict as assert } from "node:assert"
import { mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { inspect } from "node:util"

// 1. The domain and the in-memory adapter as Effect layers, no HTTP at all.
const withoutHttp = Effect.gen(function*() {
  const pets = yield* PetRepository
  const rex = yield* pets.create(
    new NewPet({ name: PetName.make("Rex"), categoryId: CategoryId.make(9007199254740993n), status: "available" })
  )
  assert.deepEqual(yield* pets.get(rex.id), rex)
  assert.deepEqual(yield* pets.list({ limit: 10, status: "available" }), [rex])
  console.log("1 domain + memory adapter: ok")
}).pipe(Effect.provide(PetRepositoryMemory.layer))

// 2. The Animal Store API mounted in this service's own router, next to its own route.
const HelloRoute = HttpRouter.add("GET", "/hello", HttpServerResponse.text("hello from the host"))
const Server = HttpRouter.serve(
  Layer.mergeAll(HelloRoute, HttpApp.layer({ production: "http://127.0.0.1/v1", staging: "http://127.0.0.1/v1" })),
  { disableLogger: true, disableListenLog: true }
).pipe(
  Layer.provide([StoreMemory.layer, ApiKeysStatic.layer([Redacted.make("consumer-key")])]),
  Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
)

const mounted = Effect.gen(function*() {
  const { address } = yield* HttpServer.HttpServer
  const base = `http://127.0.0.1:${address._tag === "UnixPathAddress" ? 0 : address.port}`
  const hello = yield* Effect.promise(() => fetch(`${base}/hello`).then((r) => r.text()))
  assert.equal(hello, "hello from the host")
  const unauthorized = yield* Effect.promise(() => fetch(`${base}/v1/pets`))
  assert.equal(unauthorized.status, 401)
  console.log("2 API mounted beside the host's routes: ok")
  return base
})

// 3. The typed client talking to the running service: the value, a page's cursor as the
// opaque string of its Link, and a 404 surfacing as a typed error.
const withClient = (base: string) =>
  Effect.gen(function*() {
    const client = yield* AnimalStoreClient
    const { pet: tom, location } = yield* client.createPet({ name: PetName.make("Tom"), categoryId: CategoryId.make(-(2n ** 63n)) })
    assert.equal(location, `/v1/pets/${tom.id}`)
    assert.equal((yield* client.getPet(tom.id)).categoryId, -(2n ** 63n))
    yield* client.createPet({ name: PetName.make("Jerry"), categoryId: CategoryId.make(1n) })
    const first = yield* client.listPets({ limit: 1 })
    assert.deepEqual(Object.keys(first), ["pets", "next"])
    assert.ok(!inspect(first, { depth: 5 }).includes("~effect"))
    assert.equal(typeof first.next, "string")
    const second = yield* client.listPets({ limit: 1, cursor: first.next })
    assert.notEqual(second.pets[0]?.id, first.pets[0]?.id)
    assert.equal((yield* client.listPets()).next, undefined)
    assert.equal(yield* petName(tom.id), "Tom")
    const missing = yield* client.getPet(PetId.make(999n)).pipe(
      Effect.as("found"),
      Effect.catchTag("NotFound", (error) => Effect.succeed(`${error.status} ${error.code}`))
    )
    assert.equal(missing, "404 not_found")
    console.log("3 typed client, with a typed 404: ok")
  }).pipe(
    Effect.provide(
      AnimalStoreClient.layer({ baseUrl: `${base}/v1`, apiKey: "consumer-key" }).pipe(Layer.provide(FetchHttpClient.layer))
    )
  )

// Exported, so its declaration must name the client's error types (TS2742/TS2883 otherwise).
export const petName = (petId: PetId) =>
  Effect.gen(function*() {
    const client = yield* AnimalStoreClient
    return (yield* client.getPet(petId)).name
  })

// 4. The embedded store's first start on an empty directory, and a reopening. Its system
// identifier, which each initdb picks anew, tells the package test whether the directory
// was filled from animal-store-pgdata's template.
const embedded = (dataDir: string) =>
  Effect.gen(function*() {
    const first = yield* Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE kept (x int)`
      yield* sql`INSERT INTO kept VALUES (42)`
      const [row] = yield* sql<{ readonly id: string }>`SELECT system_identifier::text AS id FROM pg_control_system()`
      return row?.id
    }).pipe(Effect.provide(EmbeddedDatabase.layer({ dataDir })))
    const kept = yield* Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return yield* sql<{ readonly x: number }>`SELECT x FROM kept`
    }).pipe(Effect.provide(EmbeddedDatabase.layer({ dataDir })))
    assert.deepEqual(kept, [{ x: 42 }])
    console.log(`4 embedded store on an empty directory: ok, system identifier ${first}`)
  })

const scratch = mkdtempSync(join(tmpdir(), "animal-store-consumer-data-"))
try {
  await Effect.runPromise(
    Effect.gen(function*() {
      yield* withoutHttp
      const base = yield* mounted
      yield* withClient(base)
    }).pipe(Effect.provide(Server), Effect.scoped)
  )
  await Effect.runPromise(embedded(join(scratch, "data")))
} finally {
  rmSync(scratch, { recursive: true, force: true })
}
