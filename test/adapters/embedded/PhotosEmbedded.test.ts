import { Layer } from "effect"
import * as EventLogSql from "../../../src/adapters/postgres/events/EventLogSql.ts"
import * as PetRepositorySql from "../../../src/adapters/postgres/pets/PetRepositorySql.ts"
import * as PhotoRepositorySql from "../../../src/adapters/postgres/photos/PhotoRepositorySql.ts"
import * as PhotoStoreSql from "../../../src/adapters/postgres/photos/PhotoStoreSql.ts"
import { photoRepositoryContract } from "../../ports/photos/PhotoRepositoryContract.ts"
import { photoStoreContract } from "../../ports/photos/PhotoStoreContract.ts"
import * as FreshDataDir from "./FreshDataDir.ts"

const freshDataDir = FreshDataDir.layer("animal-store-photos-")
const options = { timeout: "10 seconds", sharedConnection: true } as const

photoRepositoryContract(
  "embedded",
  Layer.mergeAll(PhotoRepositorySql.layer(options), PetRepositorySql.layer(options), EventLogSql.layer(options)).pipe(
    Layer.provide(freshDataDir)
  ),
  { timeout: 120_000 }
)
photoStoreContract("embedded", PhotoStoreSql.layer(options).pipe(Layer.provide(freshDataDir)), { timeout: 120_000 })
