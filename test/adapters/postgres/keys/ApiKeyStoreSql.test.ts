import { describe } from "@effect/vitest"
import { Layer } from "effect"
import * as ApiKeyStoreSql from "../../../../src/adapters/postgres/keys/ApiKeyStoreSql.ts"
import { apiKeyStoreContract } from "../../../ports/keys/ApiKeyStoreContract.ts"
import { layerFreshDatabase, postgresAvailable } from "../TestDatabase.ts"

describe.skipIf(!postgresAvailable)("PostgreSQL server", () => {
  // With LISTEN, as the service runs it on a server: the change feed then carries NOTIFY too.
  apiKeyStoreContract(
    "postgres",
    ApiKeyStoreSql.layer({ timeout: "10 seconds", listen: true }).pipe(Layer.provide(layerFreshDatabase()))
  )
})
