import { Effect, Layer } from "effect"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as EmbeddedDatabase from "../../../src/adapters/embedded/EmbeddedDatabase.ts"
import * as EventLogSql from "../../../src/adapters/postgres/events/EventLogSql.ts"
import * as PetRepositorySql from "../../../src/adapters/postgres/pets/PetRepositorySql.ts"
import * as WebhookRepositorySql from "../../../src/adapters/postgres/webhooks/WebhookRepositorySql.ts"
import { webhookDispatcherContract } from "./WebhookDispatcherContract.ts"

const options = { timeout: "10 seconds" } as const

const freshDataDir = Layer.unwrap(Effect.gen(function*() {
  const dataDir = yield* Effect.acquireRelease(
    Effect.promise(() => mkdtemp(join(tmpdir(), "animal-store-dispatch-"))),
    (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
  )
  return EmbeddedDatabase.layer({ dataDir })
}))

webhookDispatcherContract(
  "embedded",
  Layer.mergeAll(
    PetRepositorySql.layer({ ...options, sharedConnection: true }),
    EventLogSql.layer(options),
    WebhookRepositorySql.layer(options)
  ).pipe(Layer.provide(freshDataDir))
)
