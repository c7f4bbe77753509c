/**
 * A program's failure as one plain line on stderr, no stack: an invalid setting is named
 * with what it must be, a missing optional peer dependency with how to install it,
 * anything else is each cause's message once. Every program ends this way.
 */
import { Cause, Config, Console, Effect, Predicate, Schema } from "effect"
import * as MissingPeer from "../adapters/process/MissingPeer.ts"
import { InvalidInput } from "../domain/Errors.ts"

// "PgConnection: Failed to connect: connect ECONNREFUSED 127.0.0.1:5432": each cause's message, once.
const causeChain = (error: unknown): string | undefined => {
  const messages: Array<string> = []
  for (let current = error; Predicate.hasProperty(current, "message") && messages.length < 5;) {
    const message = String(current.message)
    if (message !== "" && !messages.some((seen) => seen.includes(message))) messages.push(message)
    current = Predicate.hasProperty(current, "cause") ? current.cause : undefined
  }
  return messages.length === 0 ? undefined : messages.join(": ")
}

/** The prefix of the service's failure: `Animal Store stopped: invalid configuration: PORT: …`. */
export const SERVICE_STOPPED = "Animal Store stopped"

/** What went wrong, in one line. */
export const message = (cause: Cause.Cause<unknown>): string => {
  const error = Cause.squash(cause)
  const peer = MissingPeer.missingPeerIn(error)
  if (peer !== undefined) return MissingPeer.hint(peer)
  return error instanceof Config.ConfigError && Schema.isSchemaError(error.cause)
    ? `invalid configuration: ${InvalidInput.fromIssue(error.cause.issue).message}`
    : causeChain(error) ?? Cause.pretty(cause)
}

/**
 * Writes `<prefix>: <message>` to stderr, for use with `Effect.tapCause`. Not for an
 * interruption (a stop asked for), nor for an error `reported` says was shown already.
 */
export const report = (prefix: string, reported: (error: unknown) => boolean = () => false) =>
(cause: Cause.Cause<unknown>): Effect.Effect<void> =>
  Cause.hasInterruptsOnly(cause) || reported(Cause.squash(cause))
    ? Effect.void
    : Console.error(`${prefix}: ${message(cause)}`)
