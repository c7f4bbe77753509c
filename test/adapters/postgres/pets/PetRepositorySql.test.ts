import { describe } from "@effect/vitest"
import { Layer } from "effect"
import * as PetRepositorySql from "../../../../src/adapters/postgres/pets/PetRepositorySql.ts"
import { petRepositoryContract } from "../../../ports/pets/PetRepositoryContract.ts"
import { layerFreshDatabase, postgresAvailable } from "../TestDatabase.ts"

describe.skipIf(!postgresAvailable)("PostgreSQL server", () => {
  petRepositoryContract(
    "postgres",
    PetRepositorySql.layer({ timeout: "10 seconds" }).pipe(Layer.provide(layerFreshDatabase())),
    { runs: 30 }
  )
})
