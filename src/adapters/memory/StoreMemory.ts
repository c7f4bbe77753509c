import { Context, Effect, Layer } from "effect"
import { OrderRepository } from "../../ports/OrderRepository.ts"
import { PetRepository } from "../../ports/PetRepository.ts"
import * as OrderRepositoryMemory from "./OrderRepositoryMemory.ts"
import { OrderTable } from "./OrderTable.ts"
import * as PetRepositoryMemory from "./PetRepositoryMemory.ts"
import { PetTable } from "./PetTable.ts"

/**
 * The whole in-memory store: a PetRepository and an OrderRepository over one set of
 * tables, so that placing an order is seen by the pet catalogue at once.
 *
 * The tables are plain values handed to both repositories when the layer is built,
 * not a service in the context: `PetRepositoryMemory.layer` stays a self-contained
 * `Layer<PetRepository>` for hosts that want only the catalogue, and no internal tag
 * appears in any public layer's type.
 */
export const layer: Layer.Layer<PetRepository | OrderRepository> = Layer.effectContext(Effect.sync(() => {
  const pets = new PetTable()
  return Context.make(PetRepository, PetRepositoryMemory.fromTable(pets)).pipe(
    Context.add(OrderRepository, OrderRepositoryMemory.fromTables(pets, new OrderTable()))
  )
}))
