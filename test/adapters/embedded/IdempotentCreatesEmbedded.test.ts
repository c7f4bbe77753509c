import { Layer } from "effect"
import * as IdempotentCreatesSql from "../../../src/adapters/postgres/idempotency/IdempotentCreatesSql.ts"
import * as PetRepositorySql from "../../../src/adapters/postgres/pets/PetRepositorySql.ts"
import { CONTRACT_OPTIONS, idempotentCreatesContract } from "../../ports/idempotency/IdempotentCreatesContract.ts"
import * as FreshDataDir from "./FreshDataDir.ts"

const freshDataDir = FreshDataDir.layer("animal-store-idempotency-")

const options = { timeout: "10 seconds", ...CONTRACT_OPTIONS } as const

idempotentCreatesContract(
  "embedded",
  Layer.mergeAll(PetRepositorySql.layer({ ...options, sharedConnection: true }), IdempotentCreatesSql.layer(options)).pipe(Layer.provide(freshDataDir)),
  { timeout: 120_000 }
)
