import { describe } from "@effect/vitest"
import { layerFreshDatabase, postgresAvailable } from "./TestDatabase.ts"
import { tagSearchPlans } from "./TagSearchPlan.ts"

describe.skipIf(!postgresAvailable)("PostgreSQL server", () => {
  tagSearchPlans("postgres", layerFreshDatabase())
})
