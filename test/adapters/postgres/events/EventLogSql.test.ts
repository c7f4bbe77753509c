import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Option, Stream } from "effect"
import { CategoryId } from "../../../../src/domain/pets/CategoryId.ts"
import { NewPet } from "../../../../src/domain/pets/NewPet.ts"
import { PetName } from "../../../../src/domain/pets/PetName.ts"
import { EventLog } from "../../../../src/ports/events/EventLog.ts"
import { PetRepository } from "../../../../src/ports/pets/PetRepository.ts"
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

  it.live("with listen, appended signals each committed append, and none for one rolled back", () =>
    Effect.gen(function*() {
      const log = yield* EventLog
      const pets = yield* PetRepository
      const pet = new NewPet({ name: PetName.make("heard"), categoryId: CategoryId.make(1n) })
      // The first signal says the LISTEN is in place (PgNotifications.listen); then only appends.
      yield* Stream.runHead(log.appended).pipe(Effect.timeout("5 seconds"))
      const heard = yield* Effect.forkScoped(Stream.runHead(log.appended))
      yield* rolledBack(pets.create(pet))
      yield* Effect.sleep("300 millis")
      assert.isUndefined(heard.pollUnsafe())
      yield* pets.create(pet)
      assert.deepStrictEqual(yield* Fiber.join(heard).pipe(Effect.timeout("5 seconds")), Option.some(undefined))
    }).pipe(
      Effect.provide(
        Layer.mergeAll(PetRepositorySql.layer(options), EventLogSql.layer({ ...options, listen: true })).pipe(
          Layer.provideMerge(layerFreshDatabase())
        )
      )
    ), 30_000)
})
