import { Effect, Layer } from "effect"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as EmbeddedDatabase from "../../../src/adapters/embedded/EmbeddedDatabase.ts"
import * as PetRepositorySql from "../../../src/adapters/postgres/PetRepositorySql.ts"
import { petRepositoryContract } from "../../ports/PetRepositoryContract.ts"

// A throwaway data directory per run, removed when the store closes.
const freshDataDir = Layer.unwrap(Effect.gen(function*() {
  const dataDir = yield* Effect.acquireRelease(
    Effect.promise(() => mkdtemp(join(tmpdir(), "animal-store-contract-"))),
    (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
  )
  return EmbeddedDatabase.layer({ dataDir })
}))

petRepositoryContract(
  "embedded",
  PetRepositorySql.layer({ timeout: "10 seconds" }).pipe(Layer.provide(freshDataDir)),
  { runs: 30, timeout: 120_000 }
)
