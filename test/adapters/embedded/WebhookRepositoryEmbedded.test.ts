import { Layer } from "effect"
import * as WebhookRepositorySql from "../../../src/adapters/postgres/webhooks/WebhookRepositorySql.ts"
import { webhookRepositoryContract } from "../../ports/webhooks/WebhookRepositoryContract.ts"
import * as FreshDataDir from "./FreshDataDir.ts"

const freshDataDir = FreshDataDir.layer("animal-store-webhooks-")

webhookRepositoryContract(
  "embedded",
  WebhookRepositorySql.layer({ timeout: "10 seconds", sharedConnection: true }).pipe(Layer.provide(freshDataDir)),
  { timeout: 120_000 }
)
