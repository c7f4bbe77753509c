import { Effect, Layer } from "effect"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as EmbeddedDatabase from "../../../src/adapters/embedded/EmbeddedDatabase.ts"
import * as WebhookRepositorySql from "../../../src/adapters/postgres/webhooks/WebhookRepositorySql.ts"
import { webhookRepositoryContract } from "../../ports/webhooks/WebhookRepositoryContract.ts"

// A throwaway data directory per run, removed when the store closes.
const freshDataDir = Layer.unwrap(Effect.gen(function*() {
  const dataDir = yield* Effect.acquireRelease(
    Effect.promise(() => mkdtemp(join(tmpdir(), "animal-store-webhooks-"))),
    (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
  )
  return EmbeddedDatabase.layer({ dataDir })
}))

webhookRepositoryContract(
  "embedded",
  WebhookRepositorySql.layer({ timeout: "10 seconds", sharedConnection: true }).pipe(Layer.provide(freshDataDir)),
  { timeout: 120_000 }
)
