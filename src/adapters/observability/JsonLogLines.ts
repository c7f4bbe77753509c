/**
 * The service's log output: one JSON object per line on stdout, in pino's shape, so the
 * tools of the Node ecosystem (pino-pretty, log shippers) read it as they read pino's:
 *
 *     {"level":30,"time":1764110000000,"pid":7,"hostname":"h","reqId":"…","req":{"method":"GET","url":"/v1/pets"},
 *      "res":{"statusCode":200},"responseTime":1,"msg":"request completed"}
 *
 * `level` is pino's number, `time` epoch milliseconds; a line's log annotations, a plain
 * object logged as the first message part (pino's merging object: `logInfo(fields, msg)`)
 * and log spans (a span's value is its duration in ms) are its fields, flat; a cause, or
 * an error logged as a message part, is `err: {type, message, stack}`. Effect's Logger
 * stays the API inside the code: this is the one logger the service installs.
 *
 * The serializer is built once: the head of each level and the process's fields are
 * prebuilt text, each field name is escaped once, and a line is concatenated, never an
 * object built to be stringified. A write to stdout is a system call, synchronous when
 * stdout is a file or a pipe, and one per request line was a fifth of the CPU of a
 * request: lines are gathered and written together after {@link FLUSH_WINDOW_MS} or
 * once {@link FLUSH_BYTES} are pending, and whatever is pending is written when the layer
 * closes and when the process exits (`process.exit` included), so no line is lost but to
 * SIGKILL.
 */
import { hostname } from "node:os"
import { Cause, Effect, Formatter, Layer, Logger, type LogLevel, Predicate, References } from "effect"

/** Longest a log line waits before it is written. */
export const FLUSH_WINDOW_MS = 50

/** Pending text that is written at once, without waiting for the window. */
export const FLUSH_BYTES = 64 * 1024

/** pino's numbers. */
const LEVEL_NUMBERS: Record<LogLevel.LogLevel, number> = {
  All: 10,
  Trace: 10,
  Debug: 20,
  Info: 30,
  Warn: 40,
  Error: 50,
  Fatal: 60,
  None: 60
}

const LEVEL_HEADS = Object.fromEntries(
  Object.entries(LEVEL_NUMBERS).map(([level, number]) => [level, `{"level":${number},"time":`])
) as Record<LogLevel.LogLevel, string>

const PROCESS_FIELDS = `,"pid":${process.pid},"hostname":${JSON.stringify(hostname())}`

// `,"name":`, escaped once per field name (the names are the code's, a few dozen).
const fieldHeads = new Map<string, string>()
const fieldHead = (name: string): string => {
  let head = fieldHeads.get(name)
  if (head === undefined) {
    head = `,${JSON.stringify(name)}:`
    fieldHeads.set(name, head)
  }
  return head
}

const isPlainObject = (value: object): value is Record<string, unknown> => {
  const prototype = Object.getPrototypeOf(value)
  return prototype === Object.prototype || prototype === null
}

/** A field's value: strings, numbers, booleans and plain objects of them directly; anything else (bigints, redacted values, class instances) as Formatter.formatJson writes it. */
const valueText = (value: unknown, depth = 0): string => {
  switch (typeof value) {
    case "string":
      return JSON.stringify(value)
    case "number":
      return Number.isFinite(value) ? String(value) : "null"
    case "boolean":
      return value ? "true" : "false"
    case "object":
      if (value !== null && depth < 2 && isPlainObject(value)) {
        let text = ""
        for (const key in value) {
          const field = value[key]
          if (field !== undefined) text += `${text === "" ? "" : ","}${JSON.stringify(key)}:${valueText(field, depth + 1)}`
        }
        return `{${text}}`
      }
  }
  return Formatter.formatJson(value)
}

const errorOf = (value: unknown): { readonly type: string; readonly message: string } => {
  const type = Predicate.hasProperty(value, "_tag") && typeof value._tag === "string"
    ? value._tag
    : value instanceof Error
    ? value.name
    : typeof value
  const message = Predicate.hasProperty(value, "message") ? String(value.message) : Formatter.format(value)
  return { type, message }
}

const errText = (error: unknown, stack: string | undefined): string => {
  const { message, type } = errorOf(error)
  return `,"err":{"type":${JSON.stringify(type)},"message":${JSON.stringify(message)},"stack":${JSON.stringify(stack ?? "")}}`
}

// `,"name":value` for each field that is not undefined.
const fieldsText = (fields: Readonly<Record<string, unknown>>): string => {
  let text = ""
  for (const name in fields) {
    const value = fields[name]
    if (value !== undefined) text += fieldHead(name) + valueText(value)
  }
  return text
}

/** The line of one log call, without its newline. */
export const pinoLine: Logger.Logger<unknown, string> = Logger.make(({ cause, date, fiber, logLevel, message }) => {
  const now = date.getTime()
  let line = LEVEL_HEADS[logLevel] + now + PROCESS_FIELDS
  line += fieldsText(fiber.getRef(References.CurrentLogAnnotations))
  const parts: ReadonlyArray<unknown> = Array.isArray(message) ? message : [message]
  const merged = parts.length > 1 && typeof parts[0] === "object" && parts[0] !== null && isPlainObject(parts[0])
    ? parts[0]
    : undefined
  if (merged !== undefined) line += fieldsText(merged)
  for (const [label, started] of fiber.getRef(References.CurrentLogSpans)) line += fieldHead(label) + (now - started)
  let msg = ""
  let err = cause.reasons.length > 0 ? errText(Cause.squash(cause), Cause.pretty(cause)) : ""
  for (let i = merged === undefined ? 0 : 1; i < parts.length; i++) {
    const part = parts[i]
    if (typeof part === "string") msg += msg === "" ? part : ` ${part}`
    else if (err === "" && part instanceof Error) err = errText(part, part.stack)
    else msg += `${msg === "" ? "" : " "}${Formatter.format(part)}`
  }
  return `${line}${err},"msg":${JSON.stringify(msg)}}`
})

// The lines not yet written to stdout.
let pending = ""
let timer: ReturnType<typeof setTimeout> | undefined

/** Writes what is pending to stdout now. */
export const flush = (): void => {
  if (timer !== undefined) {
    clearTimeout(timer)
    timer = undefined
  }
  if (pending === "") return
  const text = pending
  pending = ""
  process.stdout.write(text)
}

const append = (line: string): void => {
  pending += `${line}\n`
  if (pending.length >= FLUSH_BYTES) flush()
  // Unreferenced: a pending line never keeps the process alive; the exit hook writes it.
  else timer ??= setTimeout(flush, FLUSH_WINDOW_MS).unref()
}

/** {@link pinoLine}, written to stdout in batches. */
export const logger: Logger.Logger<unknown, void> = Logger.map(pinoLine, append)

// Synchronous on a pipe or a file, so written before the process ends: process.exit
// (the shutdown watchdog, a fatal error) included.
process.on("exit", flush)

/** The service's only logger; what is pending is written when the layer closes. */
export const layer: Layer.Layer<never> = Layer.merge(
  Logger.layer([logger]),
  Layer.effectDiscard(Effect.addFinalizer(() => Effect.sync(flush)))
)
