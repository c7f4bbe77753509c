import { assert, describe, it } from "@effect/vitest"
import { Deferred, Duration, Effect, Exit, Fiber, Layer, Scope } from "effect"
import * as ReleaseDeadline from "../../../src/adapters/process/ReleaseDeadline.ts"

/** A layer whose release waits for `done`, and says when it has begun. */
const releasedWhen = (begun: Deferred.Deferred<void>, done: Deferred.Deferred<void>) =>
  Layer.effectDiscard(Effect.addFinalizer(() => Effect.andThen(Deferred.succeed(begun, undefined), Deferred.await(done))))

describe("ReleaseDeadline", () => {
  it.live("a stuck step of a shutdown is named, and the releases it runs name themselves", () =>
    Effect.gen(function*() {
      const begun = yield* Deferred.make<void>()
      const done = yield* Deferred.make<void>()
      const scope = yield* Scope.make()
      yield* Layer.buildWithScope(
        ReleaseDeadline.layerPhase("the release of the store")(releasedWhen(begun, done)),
        scope
      )
      assert.deepStrictEqual(ReleaseDeadline.unfinished(), [])

      const closing = yield* Effect.forkChild(ReleaseDeadline.phase("the shutdown")(Scope.close(scope, Exit.void)))
      yield* Deferred.await(begun)
      // Nothing bounded under way: the innermost step is what is stuck.
      assert.deepStrictEqual(ReleaseDeadline.unfinished(), ["the release of the store"])

      const pool = yield* Effect.forkChild(ReleaseDeadline.bound("the pool", Duration.seconds(5))(Deferred.await(done)))
      yield* Effect.sleep("20 millis")
      assert.deepStrictEqual(ReleaseDeadline.unfinished(), ["the pool"])

      yield* Deferred.succeed(done, undefined)
      yield* Fiber.join(pool)
      yield* Fiber.join(closing)
      assert.deepStrictEqual(ReleaseDeadline.unfinished(), [])
    }))

  it.live("a release past its deadline is left behind, named until it ends", () =>
    Effect.gen(function*() {
      const done = yield* Deferred.make<void>()
      const exit = yield* Effect.exit(ReleaseDeadline.bound("the feed", Duration.millis(50))(Deferred.await(done)))
      assert.isTrue(Exit.isFailure(exit))
      assert.deepStrictEqual(ReleaseDeadline.unfinished(), ["the feed"])
      yield* Deferred.succeed(done, undefined)
      yield* Effect.sleep("20 millis")
      assert.deepStrictEqual(ReleaseDeadline.unfinished(), [])
    }))
})
