import { assert, describe, it } from "@effect/vitest"
import { Effect, Logger, Redacted, Schema } from "effect"
import { formatJson } from "../../../src/adapters/observability/JsonLogLines.ts"

/** Logs once through both formatters, at the same instant, and returns [ours, Effect's]. */
const bothLines = (log: Effect.Effect<void>) =>
  Effect.gen(function*() {
    const ours: Array<string> = []
    const effects: Array<string> = []
    yield* log.pipe(
      Effect.provide(Logger.layer([
        Logger.map(formatJson, (line) => ours.push(line)),
        Logger.map(Logger.formatJson, (line) => effects.push(line))
      ]))
    )
    return [ours, effects] as const
  })

const Annotations = Schema.Record(
  Schema.String,
  Schema.Union([Schema.String, Schema.Number, Schema.Boolean, Schema.BigInt, Schema.Undefined])
)

describe("JsonLogLines.formatJson", () => {
  it.effect.prop(
    "writes the text Logger.formatJson writes, for any message, annotations and spans",
    [Schema.String, Annotations, Schema.Array(Schema.String)],
    ([message, annotations, spans]) =>
      Effect.gen(function*() {
        let log = Effect.logWarning(message).pipe(Effect.annotateLogs(annotations))
        for (const span of spans) log = Effect.withLogSpan(log, span)
        const [ours, effects] = yield* bothLines(log)
        assert.strictEqual(ours.length, 1)
        assert.deepStrictEqual(ours, effects)
      }),
    { arbitrary: { runs: 300 } }
  )

  it.effect("redacts, writes bigints and a cause as Logger.formatJson does", () =>
    Effect.gen(function*() {
      const [ours, effects] = yield* bothLines(
        Effect.logError("failed", new Error("boom")).pipe(
          Effect.annotateLogs({ key: Redacted.make("secret-key"), big: 2n ** 64n, nested: { a: [1, "b"] } })
        )
      )
      assert.deepStrictEqual(ours, effects)
      assert.notInclude(ours[0], "secret-key")
      assert.include(ours[0], "18446744073709551616")
    }))
})
