import { describe } from "@effect/vitest"
import { Layer } from "effect"
import * as EventLogSql from "../../../src/adapters/postgres/events/EventLogSql.ts"
import * as PetRepositorySql from "../../../src/adapters/postgres/pets/PetRepositorySql.ts"
import * as WebhookRepositorySql from "../../../src/adapters/postgres/webhooks/WebhookRepositorySql.ts"
import { layerFreshDatabase, postgresAvailable } from "../../adapters/postgres/TestDatabase.ts"
import { webhookDispatcherContract } from "./WebhookDispatcherContract.ts"

const options = { timeout: "10 seconds" } as const

describe.skipIf(!postgresAvailable)("PostgreSQL server", () => {
  webhookDispatcherContract(
    "postgres",
    Layer.mergeAll(PetRepositorySql.layer(options), EventLogSql.layer({ ...options, listen: true }), WebhookRepositorySql.layer(options)).pipe(
      Layer.provide(layerFreshDatabase({ maxConnections: 10 }))
    )
  )
})
