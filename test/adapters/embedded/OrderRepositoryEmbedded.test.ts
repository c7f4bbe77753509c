import { Layer } from "effect"
import * as OrderRepositorySql from "../../../src/adapters/postgres/orders/OrderRepositorySql.ts"
import * as PetRepositorySql from "../../../src/adapters/postgres/pets/PetRepositorySql.ts"
import { orderRepositoryContract } from "../../ports/orders/OrderRepositoryContract.ts"
import * as FreshDataDir from "./FreshDataDir.ts"

const freshDataDir = FreshDataDir.layer("animal-store-orders-")

const options = { timeout: "10 seconds" } as const

orderRepositoryContract(
  "embedded",
  Layer.mergeAll(PetRepositorySql.layer({ ...options, sharedConnection: true }), OrderRepositorySql.layer(options)).pipe(Layer.provide(freshDataDir)),
  { runs: 20, timeout: 120_000 }
)
