import { Schema, SchemaIssue } from "effect"
import { OrderEvent } from "./orders/OrderEvent.ts"
import { OrderId } from "./orders/OrderId.ts"
import { OrderStatus } from "./orders/OrderStatus.ts"
import { PetId } from "./pets/PetId.ts"
import { PetStatus } from "./pets/PetStatus.ts"

/** No pet has the requested id. */
export class PetNotFound extends Schema.TaggedError<PetNotFound>()("PetNotFound", {
  id: PetId
}) {
  override get message(): string {
    return `pet ${this.id} not found`
  }
}

// What a value of each schema kind is called when the schema itself names nothing.
const KIND_NAMES: Partial<Record<string, string>> = {
  Objects: "an object",
  Arrays: "an array",
  String: "a string",
  Number: "a number",
  Boolean: "a boolean",
  BigInt: "an integer"
}

const issueFormatter = SchemaIssue.makeFormatterStandardSchemaV1({
  leafHook: (issue) => {
    const annotations = "annotations" in issue ? issue.annotations : undefined
    if (typeof annotations?.["message"] === "string") return annotations["message"]
    if (typeof annotations?.["expected"] === "string") return `expected ${annotations["expected"]}`
    switch (issue._tag) {
      case "MissingKey":
        return "is required"
      case "UnexpectedKey":
        return "is not allowed"
      case "InvalidType": {
        // A schema's own message says what is allowed (a literal's "must be 1"); its kind cannot.
        const message = issue.ast.annotations?.["message"]
        if (typeof message === "string") return message
        const expected = issue.ast.annotations?.["expected"] ?? KIND_NAMES[issue.ast._tag]
        return typeof expected === "string" ? `expected ${expected}` : "has the wrong type"
      }
      default:
        return "is invalid"
    }
  }
})

const formatPath = (path: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }>): string =>
  path.reduce<string>((acc, segment) => {
    const key = typeof segment === "object" ? segment.key : segment
    return typeof key === "number" ? `${acc}[${key}]` : acc === "" ? String(key) : `${acc}.${String(key)}`
  }, "")

/** Input broke a domain rule; the message names the field and the rule. */
export class InvalidInput extends Schema.TaggedError<InvalidInput>()("InvalidInput", {
  message: Schema.String
}) {
  /**
   * Builds the message `field: what was wrong` (issues joined by "; ") from a schema
   * issue. `whole` names the input itself, for issues about the whole value.
   */
  static fromIssue(issue: SchemaIssue.Issue, whole?: string): InvalidInput {
    const message = issueFormatter(issue).issues
      .map(({ message, path = [] }) => {
        const where = path.length === 0 ? whole ?? "" : formatPath(path)
        return where === "" ? message : `${where}: ${message}`
      })
      .join("; ")
    return new InvalidInput({ message })
  }
}

/** The caller presented no credential, or one that is not valid. */
export class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", {
  credential: Schema.Literals(["missing", "invalid"])
}) {
  override get message(): string {
    return this.credential === "missing"
      ? "an API key is required: send Authorization: Bearer <key>"
      : "the API key is not valid"
  }
}

/** The caller's key is valid, but its scope does not allow the operation. */
export class InsufficientScope extends Schema.TaggedError<InsufficientScope>()("InsufficientScope", {
  scope: Schema.String,
  operation: Schema.String
}) {
  override get message(): string {
    return `this API key has the ${this.scope} scope; ${this.operation} needs a write key`
  }
}

/** The resource existed once but its operation has been withdrawn. */
export class Gone extends Schema.TaggedError<Gone>()("Gone", {
  message: Schema.String
}) {}

/** The store cannot be reached or did not answer in time; the request may be retried. */
export class StoreUnavailable extends Schema.TaggedError<StoreUnavailable>()("StoreUnavailable", {
  message: Schema.String
}) {}

/** No order has the requested id. */
export class OrderNotFound extends Schema.TaggedError<OrderNotFound>()("OrderNotFound", {
  id: OrderId
}) {
  override get message(): string {
    return `order ${this.id} not found`
  }
}

// The verb of each event in a refusal: "cannot be approved".
const PAST_TENSE: Record<OrderEvent, string> = {
  place: "placed",
  approve: "approved",
  deliver: "delivered",
  cancel: "cancelled"
}

/** The order's state does not allow the event (the transition table has no such row). */
export class OrderConflict extends Schema.TaggedError<OrderConflict>()("OrderConflict", {
  orderId: OrderId,
  status: OrderStatus,
  event: OrderEvent
}) {
  override get message(): string {
    return `order ${this.orderId} is ${this.status}; it cannot be ${PAST_TENSE[this.event]}`
  }
}

/** An order can be placed only for an available pet. */
export class PetNotAvailable extends Schema.TaggedError<PetNotAvailable>()("PetNotAvailable", {
  petId: PetId,
  status: Schema.UndefinedOr(PetStatus)
}) {
  override get message(): string {
    return `pet ${this.petId} is ${this.status ?? "without a status"}; only an available pet can be ordered`
  }
}

/**
 * A feed cursor points before events that retention has already removed: reading on
 * from it would skip them silently, so the reader must start again from the oldest kept.
 */
export class CursorExpired extends Schema.TaggedError<CursorExpired>()("CursorExpired", {
  after: Schema.BigInt,
  sweptThrough: Schema.BigInt
}) {
  override get message(): string {
    return `events after ${this.after} are no longer kept (retention removed those up to ${this.sweptThrough}); ` +
      `read from the oldest kept event, without after`
  }
}

/**
 * The instance already holds as many Server-Sent Events streams as it allows: each holds
 * a connection and its buffers for as long as the client stays, so their number is bounded.
 */
export class StreamLimitReached extends Schema.TaggedError<StreamLimitReached>()("StreamLimitReached", {
  limit: Schema.Number
}) {
  override get message(): string {
    return `this instance already serves its ${this.limit} event streams; retry later`
  }
}

/** The pet changed since the version the caller named (`If-Match`); nothing was changed. */
export class PetChanged extends Schema.TaggedError<PetChanged>()("PetChanged", {
  id: PetId
}) {
  override get message(): string {
    return `pet ${this.id} has changed since the version in If-Match; read it again`
  }
}

/** Orders own a pet's status while one is open: its status cannot be set, nor the pet deleted. */
export class PetHasOpenOrder extends Schema.TaggedError<PetHasOpenOrder>()("PetHasOpenOrder", {
  id: PetId
}) {
  override get message(): string {
    return `pet ${this.id} has an open order; its status follows the order until it is delivered or cancelled`
  }
}
