import { Effect, Layer } from "effect"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as EmbeddedDatabase from "../../../src/adapters/embedded/EmbeddedDatabase.ts"
import * as IdempotentCreatesSql from "../../../src/adapters/postgres/idempotency/IdempotentCreatesSql.ts"
import * as PetRepositorySql from "../../../src/adapters/postgres/pets/PetRepositorySql.ts"
import { CONTRACT_OPTIONS, idempotentCreatesContract } from "../../ports/idempotency/IdempotentCreatesContract.ts"

// A throwaway data directory per run, removed when the store closes.
const freshDataDir = Layer.unwrap(Effect.gen(function*() {
  const dataDir = yield* Effect.acquireRelease(
    Effect.promise(() => mkdtemp(join(tmpdir(), "animal-store-idempotency-"))),
    (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
  )
  return EmbeddedDatabase.layer({ dataDir })
}))

const options = { timeout: "10 seconds", ...CONTRACT_OPTIONS } as const

idempotentCreatesContract(
  "embedded",
  Layer.mergeAll(PetRepositorySql.layer({ ...options, sharedConnection: true }), IdempotentCreatesSql.layer(options)).pipe(Layer.provide(freshDataDir)),
  { timeout: 120_000 }
)
