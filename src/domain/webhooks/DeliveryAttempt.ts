import { Schema } from "effect"
import { EventId } from "../events/EventId.ts"
import { Int64 } from "../Int64.ts"
import { WebhookId } from "./WebhookId.ts"

/** The id of a recorded delivery attempt: assigned in recording order, a keyset cursor. */
export const DeliveryId = Int64.pipe(Schema.brand("DeliveryId"))
/** A value of {@link DeliveryId}. */
export type DeliveryId = typeof DeliveryId.Type

/**
 * How an attempt ended: `delivered` (a 2xx answer), `gone` (the subscription is
 * disabled: the receiver answered 410, asking to stop, or its URL was refused at
 * delivery, nothing sent and no status: the URL rules, or a host that now resolves to a
 * refused address) or `retry` (any other answer, a redirect, a timeout, a name that does
 * not resolve or resolves to no address, or a network error: tried again on the retry
 * schedule).
 */
export const DeliveryOutcome = Schema.Literals(["delivered", "gone", "retry"])
/** A value of {@link DeliveryOutcome}. */
export type DeliveryOutcome = typeof DeliveryOutcome.Type

/** Longest error text kept with an attempt, in characters. */
export const DELIVERY_ERROR_MAX_LENGTH = 500

/** What an attempt to deliver an event to a subscription did, as it is recorded. */
export const AttemptResult = Schema.Struct({
  outcome: DeliveryOutcome,
  /** The answer's status; none when no answer came. */
  httpStatus: Schema.UndefinedOr(Schema.Int),
  /** From the request's start to its answer (or its failure). */
  durationMs: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)),
  /** Why it failed, when it did; none when delivered. */
  error: Schema.UndefinedOr(Schema.String.check(Schema.isMaxLength(DELIVERY_ERROR_MAX_LENGTH)))
})
/** A value of {@link AttemptResult}. */
export type AttemptResult = typeof AttemptResult.Type

/**
 * How a recorded attempt ended: an outcome of {@link DeliveryOutcome}, or `given_up`: the
 * event is left and the next one comes, because its retries ran past the 24 h window
 * (the last failed attempt is recorded so), or because retention removed it before it
 * was delivered (recorded without an attempt: `attempt` counts the tries made, possibly 0).
 */
export const AttemptOutcome = Schema.Literals([...DeliveryOutcome.literals, "given_up"])
/** A value of {@link AttemptOutcome}. */
export type AttemptOutcome = typeof AttemptOutcome.Type

/** One recorded attempt. `attempt` counts the tries of this event to this subscription. */
export class DeliveryAttempt extends Schema.Class<DeliveryAttempt>("DeliveryAttempt")({
  id: DeliveryId,
  webhookId: WebhookId,
  eventId: EventId,
  attempt: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)),
  attemptedAt: Schema.DateTimeUtc,
  ...AttemptResult.fields,
  outcome: AttemptOutcome
}) {}
