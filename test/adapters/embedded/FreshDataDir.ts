import { Effect, Layer } from "effect"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as EmbeddedDatabase from "../../../src/adapters/embedded/EmbeddedDatabase.ts"

/** The embedded database in a throwaway data directory (named from `prefix`), removed when the layer closes. */
export const layer = (prefix: string) =>
  Layer.unwrap(Effect.gen(function*() {
    const dataDir = yield* Effect.acquireRelease(
      Effect.promise(() => mkdtemp(join(tmpdir(), prefix))),
      (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
    )
    return EmbeddedDatabase.layer({ dataDir })
  }))
