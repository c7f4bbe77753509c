import { Effect, Layer } from "effect"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as EmbeddedDatabase from "../../../src/adapters/embedded/EmbeddedDatabase.ts"
import * as EventLogSql from "../../../src/adapters/postgres/events/EventLogSql.ts"
import * as OrderRepositorySql from "../../../src/adapters/postgres/orders/OrderRepositorySql.ts"
import * as PetRepositorySql from "../../../src/adapters/postgres/pets/PetRepositorySql.ts"
import { eventLogContract } from "../../ports/events/EventLogContract.ts"
import { rolledBack } from "../postgres/events/EventLogRollback.ts"

// A throwaway data directory per run, removed when the store closes.
const freshDataDir = Layer.unwrap(Effect.gen(function*() {
  const dataDir = yield* Effect.acquireRelease(
    Effect.promise(() => mkdtemp(join(tmpdir(), "animal-store-events-"))),
    (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
  )
  return EmbeddedDatabase.layer({ dataDir })
}))

const options = { timeout: "10 seconds" } as const

eventLogContract(
  "embedded",
  Layer.mergeAll(
    PetRepositorySql.layer({ ...options, sharedConnection: true }),
    OrderRepositorySql.layer(options),
    EventLogSql.layer(options)
  ).pipe(Layer.provideMerge(freshDataDir)),
  { runs: 20, writers: 4, timeout: 120_000, rolledBack: rolledBack as never }
)
