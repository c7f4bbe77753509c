import { describe } from "@effect/vitest"
import { Layer } from "effect"
import * as EventLogSql from "../../../../src/adapters/postgres/events/EventLogSql.ts"
import * as PetRepositorySql from "../../../../src/adapters/postgres/pets/PetRepositorySql.ts"
import * as PhotoRepositorySql from "../../../../src/adapters/postgres/photos/PhotoRepositorySql.ts"
import * as PhotoStoreSql from "../../../../src/adapters/postgres/photos/PhotoStoreSql.ts"
import { photoRepositoryContract } from "../../../ports/photos/PhotoRepositoryContract.ts"
import { photoStoreContract } from "../../../ports/photos/PhotoStoreContract.ts"
import { layerFreshDatabase, postgresAvailable } from "../TestDatabase.ts"

const options = { timeout: "10 seconds" } as const

describe.skipIf(!postgresAvailable)("PostgreSQL server", () => {
  photoRepositoryContract(
    "postgres",
    Layer.mergeAll(PhotoRepositorySql.layer(options), PetRepositorySql.layer(options), EventLogSql.layer(options)).pipe(
      Layer.provide(layerFreshDatabase())
    )
  )
  photoStoreContract("postgres", PhotoStoreSql.layer(options).pipe(Layer.provide(layerFreshDatabase())))
})
