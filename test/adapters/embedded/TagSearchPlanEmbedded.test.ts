import { Effect, Layer } from "effect"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as EmbeddedDatabase from "../../../src/adapters/embedded/EmbeddedDatabase.ts"
import { tagSearchPlans } from "../postgres/TagSearchPlan.ts"

// A throwaway data directory, removed when the store closes.
const freshDataDir = Layer.unwrap(Effect.gen(function*() {
  const dataDir = yield* Effect.acquireRelease(
    Effect.promise(() => mkdtemp(join(tmpdir(), "animal-store-plan-"))),
    (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
  )
  return EmbeddedDatabase.layer({ dataDir })
}))

tagSearchPlans("embedded", freshDataDir)
