import { describe } from "@effect/vitest"
import { Layer } from "effect"
import * as EventLogSql from "../../../../src/adapters/postgres/events/EventLogSql.ts"
import * as OrderRepositorySql from "../../../../src/adapters/postgres/orders/OrderRepositorySql.ts"
import * as PetRepositorySql from "../../../../src/adapters/postgres/pets/PetRepositorySql.ts"
import { eventLogContract } from "../../../ports/events/EventLogContract.ts"
import { layerFreshDatabase, postgresAvailable } from "../TestDatabase.ts"
import { rolledBack } from "./EventLogRollback.ts"

const options = { timeout: "10 seconds" } as const

describe.skipIf(!postgresAvailable)("PostgreSQL server", () => {
  eventLogContract(
    "postgres",
    Layer.mergeAll(PetRepositorySql.layer(options), OrderRepositorySql.layer(options), EventLogSql.layer(options)).pipe(
      Layer.provideMerge(layerFreshDatabase({ maxConnections: 10 }))
    ),
    { runs: 30, writers: 8, rolledBack: rolledBack as never }
  )
})
