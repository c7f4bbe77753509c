import { hostname } from "node:os"
import { Writable } from "node:stream"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Logger, Redacted, Schema } from "effect"
import pino from "pino"
import { pinoLine } from "../../../src/adapters/observability/JsonLogLines.ts"

/** The lines our serializer writes for `log`. */
const linesOf = (log: Effect.Effect<void>) =>
  Effect.gen(function*() {
    const lines: Array<string> = []
    yield* log.pipe(Effect.provide(Logger.layer([Logger.map(pinoLine, (line) => lines.push(line))])))
    return lines
  })

/** What pino itself writes for the same fields and message, at `time`. */
const pinoWrites = (level: "info" | "warn" | "error", fields: Record<string, unknown>, msg: string, time: number) => {
  let written = ""
  const destination = new Writable({
    write(chunk, _encoding, done) {
      written += String(chunk)
      done()
    }
  })
  const logger = pino({ base: { pid: process.pid, hostname: hostname() }, timestamp: () => `,"time":${time}` }, destination)
  logger[level](fields, msg)
  return written.trimEnd()
}

// Well formed: pino's stream turns a lone surrogate into U+FFFD, where JSON.stringify escapes it.
const Text = Schema.String.check(Schema.makeFilter((text: string) => text.isWellFormed()))

const Fields = Schema.Record(
  Schema.String.check(Schema.isPattern(/^[a-z][a-zA-Z.]*$/)),
  Schema.Union([Text, Schema.Finite, Schema.Boolean])
)

describe("JsonLogLines.pinoLine", () => {
  it.effect.prop(
    "writes the object pino writes, for any message and fields",
    [Text, Fields],
    ([message, fields]) =>
      Effect.gen(function*() {
        const [line] = yield* linesOf(Effect.logWarning(message).pipe(Effect.annotateLogs(fields)))
        const ours = JSON.parse(line!) as { time: number }
        assert.deepStrictEqual(ours, JSON.parse(pinoWrites("warn", fields, message, ours.time)))
      }),
    { arbitrary: { runs: 200 } }
  )

  it.effect("merges a plain object logged before the message into the line, as pino does: the request line", () =>
    Effect.gen(function*() {
      const fields = {
        reqId: "r-1",
        req: { method: "GET", url: "/v1/pets" },
        res: { statusCode: 200 },
        route: "/v1/pets",
        responseTime: 3
      }
      const [line, objectOnly] = yield* linesOf(Effect.gen(function*() {
        yield* Effect.logInfo(fields, "request completed")
        yield* Effect.logInfo({ alone: true })
      }))
      const parsed = JSON.parse(line!) as { time: number }
      assert.deepStrictEqual(parsed, JSON.parse(pinoWrites("info", fields, "request completed", parsed.time)))
      // An object that is the whole message is the message, as Effect's own loggers write it.
      assert.strictEqual((JSON.parse(objectOnly!) as { msg: string }).msg, "{\"alone\":true}")
    }))

  it.effect("writes a log span as its milliseconds", () =>
    Effect.gen(function*() {
      const [line] = yield* linesOf(Effect.logInfo("done").pipe(Effect.withLogSpan("took")))
      assert.isAtLeast((JSON.parse(line!) as { took: number }).took, 0)
    }))

  it.effect("writes a cause, or an error logged with the message, as err {type, message, stack}", () =>
    Effect.gen(function*() {
      const [withCause, withError] = yield* linesOf(Effect.gen(function*() {
        yield* Effect.logError("failed", yield* Effect.exit(Effect.fail(new TypeError("boom"))).pipe(
          Effect.map((exit) => exit._tag === "Failure" ? exit.cause : undefined)
        ))
        yield* Effect.logWarning("sweep failed", new RangeError("too far"))
      }))
      const cause = JSON.parse(withCause!) as { level: number; msg: string; err: Record<string, string> }
      assert.strictEqual(cause.level, 50)
      assert.strictEqual(cause.msg, "failed")
      assert.deepInclude(cause.err, { type: "TypeError", message: "boom" })
      assert.include(cause.err["stack"], "boom")
      const error = JSON.parse(withError!) as { level: number; msg: string; err: Record<string, string> }
      assert.strictEqual(error.level, 40)
      assert.strictEqual(error.msg, "sweep failed")
      assert.deepInclude(error.err, { type: "RangeError", message: "too far" })
      assert.include(error.err["stack"], "RangeError")
    }))

  it.effect("redacts, and writes bigints", () =>
    Effect.gen(function*() {
      const [line] = yield* linesOf(
        Effect.logInfo("keys").pipe(Effect.annotateLogs({ key: Redacted.make("secret-key"), big: 2n ** 64n }))
      )
      assert.notInclude(line, "secret-key")
      assert.include(line, "18446744073709551616")
      assert.doesNotThrow(() => JSON.parse(line!))
    }))
})
