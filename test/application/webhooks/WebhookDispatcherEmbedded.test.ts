import { Layer } from "effect"
import * as EventLogSql from "../../../src/adapters/postgres/events/EventLogSql.ts"
import * as PetRepositorySql from "../../../src/adapters/postgres/pets/PetRepositorySql.ts"
import * as WebhookRepositorySql from "../../../src/adapters/postgres/webhooks/WebhookRepositorySql.ts"
import { webhookDispatcherContract } from "./WebhookDispatcherContract.ts"
import * as FreshDataDir from "../../adapters/embedded/FreshDataDir.ts"

const options = { timeout: "10 seconds" } as const

const freshDataDir = FreshDataDir.layer("animal-store-dispatch-")

webhookDispatcherContract(
  "embedded",
  Layer.mergeAll(
    PetRepositorySql.layer({ ...options, sharedConnection: true }),
    EventLogSql.layer(options),
    WebhookRepositorySql.layer(options)
  ).pipe(Layer.provide(freshDataDir))
)
