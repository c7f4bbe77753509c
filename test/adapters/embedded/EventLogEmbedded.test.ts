import { Layer } from "effect"
import * as EventLogSql from "../../../src/adapters/postgres/events/EventLogSql.ts"
import * as OrderRepositorySql from "../../../src/adapters/postgres/orders/OrderRepositorySql.ts"
import * as PetRepositorySql from "../../../src/adapters/postgres/pets/PetRepositorySql.ts"
import { eventLogContract } from "../../ports/events/EventLogContract.ts"
import { rolledBack } from "../postgres/events/EventLogRollback.ts"
import * as FreshDataDir from "./FreshDataDir.ts"

const freshDataDir = FreshDataDir.layer("animal-store-events-")

const options = { timeout: "10 seconds" } as const

eventLogContract(
  "embedded",
  Layer.mergeAll(
    PetRepositorySql.layer({ ...options, sharedConnection: true }),
    OrderRepositorySql.layer(options),
    EventLogSql.layer(options)
  ).pipe(Layer.provideMerge(freshDataDir)),
  { runs: 20, writers: 4, timeout: 120_000, rolledBack: rolledBack as never }
)
