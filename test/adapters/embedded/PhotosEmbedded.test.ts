import { Effect, Layer } from "effect"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as EmbeddedDatabase from "../../../src/adapters/embedded/EmbeddedDatabase.ts"
import * as EventLogSql from "../../../src/adapters/postgres/events/EventLogSql.ts"
import * as PetRepositorySql from "../../../src/adapters/postgres/pets/PetRepositorySql.ts"
import * as PhotoRepositorySql from "../../../src/adapters/postgres/photos/PhotoRepositorySql.ts"
import * as PhotoStoreSql from "../../../src/adapters/postgres/photos/PhotoStoreSql.ts"
import { photoRepositoryContract } from "../../ports/photos/PhotoRepositoryContract.ts"
import { photoStoreContract } from "../../ports/photos/PhotoStoreContract.ts"

// A throwaway data directory per suite, removed when the store closes.
const freshDataDir = Layer.unwrap(Effect.gen(function*() {
  const dataDir = yield* Effect.acquireRelease(
    Effect.promise(() => mkdtemp(join(tmpdir(), "animal-store-photos-"))),
    (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
  )
  return EmbeddedDatabase.layer({ dataDir })
}))
const options = { timeout: "10 seconds", sharedConnection: true } as const

photoRepositoryContract(
  "embedded",
  Layer.mergeAll(PhotoRepositorySql.layer(options), PetRepositorySql.layer(options), EventLogSql.layer(options)).pipe(
    Layer.provide(freshDataDir)
  ),
  { timeout: 120_000 }
)
photoStoreContract("embedded", PhotoStoreSql.layer(options).pipe(Layer.provide(freshDataDir)), { timeout: 120_000 })
