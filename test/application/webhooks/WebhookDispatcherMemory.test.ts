import * as StoreMemory from "../../../src/adapters/memory/StoreMemory.ts"
import { webhookDispatcherContract } from "./WebhookDispatcherContract.ts"

// One file per store (this one, WebhookDispatcherEmbedded and WebhookDispatcherPostgres), so
// that the three runs of the contract go to workers of their own.
webhookDispatcherContract("memory", StoreMemory.layer)
