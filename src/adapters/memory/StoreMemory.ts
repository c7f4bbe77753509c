import { Context, Effect, Layer } from "effect"
import { EventLog } from "../../ports/events/EventLog.ts"
import type { IdempotentCreates } from "../../ports/idempotency/IdempotentCreates.ts"
import { OrderRepository } from "../../ports/orders/OrderRepository.ts"
import { PetRepository } from "../../ports/pets/PetRepository.ts"
import { PhotoRepository } from "../../ports/photos/PhotoRepository.ts"
import type { PhotoStore } from "../../ports/photos/PhotoStore.ts"
import type { WebhookRepository } from "../../ports/webhooks/WebhookRepository.ts"
import * as EventLogMemory from "./events/EventLogMemory.ts"
import { EventTable } from "./events/EventTable.ts"
import * as IdempotentCreatesMemory from "./idempotency/IdempotentCreatesMemory.ts"
import * as OrderRepositoryMemory from "./orders/OrderRepositoryMemory.ts"
import { OrderTable } from "./orders/OrderTable.ts"
import * as PetRepositoryMemory from "./pets/PetRepositoryMemory.ts"
import { PetTable } from "./pets/PetTable.ts"
import * as PhotoRepositoryMemory from "./photos/PhotoRepositoryMemory.ts"
import * as PhotoStoreMemory from "./photos/PhotoStoreMemory.ts"
import * as WebhookRepositoryMemory from "./webhooks/WebhookRepositoryMemory.ts"

/**
 * The whole in-memory store: a PetRepository and an OrderRepository over one set of
 * tables, so that placing an order is seen by the pet catalogue at once, the EventLog
 * both record their changes in, the IdempotentCreates that keeps the answers of their
 * creates, the webhook subscriptions, and pets' photos (records and bytes).
 *
 * The tables are plain values handed to both repositories when the layer is built,
 * not a service in the context: `PetRepositoryMemory.layer` stays a self-contained
 * `Layer<PetRepository>` for hosts that want only the catalogue, and no internal tag
 * appears in any public layer's type.
 */
export const layerWith = (
  options: IdempotentCreatesMemory.Options
): Layer.Layer<
  PetRepository | OrderRepository | EventLog | IdempotentCreates | WebhookRepository | PhotoRepository | PhotoStore
> =>
  Layer.mergeAll(
    Layer.effectContext(Effect.sync(() => {
      const pets = new PetTable()
      const orders = new OrderTable()
      const events = new EventTable()
      return Context.make(PetRepository, PetRepositoryMemory.fromTables(pets, events, (id) => orders.hasOpen(id))).pipe(
        Context.add(OrderRepository, OrderRepositoryMemory.fromTables(pets, orders, events)),
        Context.add(EventLog, EventLogMemory.fromTable(events)),
        Context.add(PhotoRepository, PhotoRepositoryMemory.fromTables(pets, events))
      )
    })),
    IdempotentCreatesMemory.layer(options),
    WebhookRepositoryMemory.layer,
    PhotoStoreMemory.layer
  )

/** The in-memory store with keys kept for 24 hours, at most 10,000 of them (IdempotentCreatesMemory.MAX_KEYS). */
export const layer: Layer.Layer<
  PetRepository | OrderRepository | EventLog | IdempotentCreates | WebhookRepository | PhotoRepository | PhotoStore
> =
  layerWith({})
