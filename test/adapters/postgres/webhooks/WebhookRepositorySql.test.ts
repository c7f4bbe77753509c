import { describe } from "@effect/vitest"
import { Layer } from "effect"
import * as WebhookRepositorySql from "../../../../src/adapters/postgres/webhooks/WebhookRepositorySql.ts"
import { webhookRepositoryContract } from "../../../ports/webhooks/WebhookRepositoryContract.ts"
import { layerFreshDatabase, postgresAvailable } from "../TestDatabase.ts"

describe.skipIf(!postgresAvailable)("PostgreSQL server", () => {
  webhookRepositoryContract(
    "postgres",
    WebhookRepositorySql.layer({ timeout: "10 seconds" }).pipe(Layer.provide(layerFreshDatabase()))
  )
})
