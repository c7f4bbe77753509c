import { Effect, Layer } from "effect"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as EmbeddedDatabase from "../../../src/adapters/embedded/EmbeddedDatabase.ts"
import * as ApiKeyStoreSql from "../../../src/adapters/postgres/keys/ApiKeyStoreSql.ts"
import { apiKeyStoreContract } from "../../ports/keys/ApiKeyStoreContract.ts"

// A throwaway data directory per run, removed when the store closes.
const freshDataDir = Layer.unwrap(Effect.gen(function*() {
  const dataDir = yield* Effect.acquireRelease(
    Effect.promise(() => mkdtemp(join(tmpdir(), "animal-store-keys-"))),
    (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
  )
  return EmbeddedDatabase.layer({ dataDir })
}))

apiKeyStoreContract(
  "embedded",
  ApiKeyStoreSql.layer({ timeout: "10 seconds", listen: false }).pipe(Layer.provide(freshDataDir)),
  { timeout: 120_000 }
)
