import * as WebhookRepositoryMemory from "../../../../src/adapters/memory/webhooks/WebhookRepositoryMemory.ts"
import { webhookRepositoryContract } from "../../../ports/webhooks/WebhookRepositoryContract.ts"

webhookRepositoryContract("memory", WebhookRepositoryMemory.layer)
