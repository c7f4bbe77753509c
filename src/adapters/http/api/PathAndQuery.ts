import { Effect, Schema, SchemaIssue, SchemaTransformation } from "effect"
import { PAGE_LIMIT_MAX, PAGE_LIMIT_MIN } from "../../../domain/paging/PageLimit.ts"
import { EventId } from "../../../domain/events/EventId.ts"
import { OrderId } from "../../../domain/orders/OrderId.ts"
import { DeliveryId } from "../../../domain/webhooks/DeliveryAttempt.ts"
import { WebhookId } from "../../../domain/webhooks/WebhookId.ts"
import { PetId } from "../../../domain/pets/PetId.ts"
import { PET_TAG_PATTERN, PetTag } from "../../../domain/pets/PetTag.ts"
import { PhotoId } from "../../../domain/photos/PhotoId.ts"

const DIGITS = /^(?:0|[1-9]\d*)$/
const SIGNED_DIGITS = /^-?(?:0|[1-9]\d*)$/
const PET_TAG = new RegExp(PET_TAG_PATTERN)

/**
 * `limit` as it appears in a query string: plain decimal digits only, so `1e1`, `0x10`,
 * ` 5` and `2.0` are refused rather than coerced.
 */
export const LimitParam = Schema.String.check(
  Schema.isPattern(DIGITS, { message: `must be an integer from ${PAGE_LIMIT_MIN} to ${PAGE_LIMIT_MAX}` })
).pipe(
  Schema.decodeTo(
    Schema.Int.check(
      Schema.isBetween(
        { minimum: PAGE_LIMIT_MIN, maximum: PAGE_LIMIT_MAX },
        { message: `must be an integer from ${PAGE_LIMIT_MIN} to ${PAGE_LIMIT_MAX}` }
      )
    ),
    SchemaTransformation.transform({ decode: Number, encode: String })
  )
)

/** An int64 id in a URL path or query: an optionally signed decimal integer within int64. */
const idParam = <S extends Schema.Codec<bigint, bigint>>(id: S) =>
  Schema.String.check(
    Schema.isPattern(SIGNED_DIGITS, { message: "expected an integer" })
  ).pipe(
    Schema.decodeTo(id, SchemaTransformation.transform({ decode: BigInt, encode: String }))
  )

/** A pet id in a URL path or query. */
export const PetIdParam = idParam(PetId)
/** An order id in a URL path. */
export const OrderIdParam = idParam(OrderId)
/** A webhook subscription's id in a URL path. */
export const WebhookIdParam = idParam(WebhookId)

const invalidCursor = (input: string) =>
  new SchemaIssue.InvalidValue({ message: "is not a cursor this service issued" }, input)

/**
 * An opaque cursor: `prefix` and the value of a page's last row, as base64url. It decodes
 * only as this service writes it: the prefix, a value `valid` accepts, and the same
 * base64url text again (no padding or other spelling of the same bytes).
 */
const prefixedCursor = <A>(prefix: string, valid: RegExp, value: (text: string) => A) => {
  const of = (text: string): string => Buffer.from(`${prefix}${text}`, "utf8").toString("base64url")
  const decode = (cursor: string): Effect.Effect<A, SchemaIssue.Issue> => {
    const text = Buffer.from(cursor, "base64url").toString("utf8")
    const rest = text.startsWith(prefix) ? text.slice(prefix.length) : ""
    return valid.test(rest) && of(rest) === cursor ? Effect.succeed(value(rest)) : Effect.fail(invalidCursor(cursor))
  }
  return { of, decode }
}

const idCursor = prefixedCursor("after:", DIGITS, BigInt)

/**
 * The cursor of a page that ends at `id`: what the cursor schemas below encode, written
 * directly by the list handlers, which would otherwise run the schema's encoder (and a
 * fiber for its effectful transformation) on every page.
 */
export const cursorOf = (id: bigint): string => idCursor.of(String(id))

/**
 * The opaque `cursor` of a next-page link: the last id of the previous page, so paging
 * is a keyset scan (no gaps or repeats when rows are added meanwhile).
 */
const cursorParam = <S extends Schema.Codec<bigint, bigint>>(id: S) =>
  Schema.String.pipe(
    Schema.decodeTo(
      id,
      SchemaTransformation.transformEffect({ decode: idCursor.decode, encode: (id: bigint) => Effect.succeed(cursorOf(id)) })
    )
  )

const tagCursor = prefixedCursor("tag:", PET_TAG, (tag) => tag)

/** The cursor of a page of tags that ends at `tag`: what {@link TagCursorParam} decodes. */
export const tagCursorOf = (tag: string): string => tagCursor.of(tag)

/** The opaque `cursor` of a next page of tags: the last tag of the previous page (tags are paged in tag order). */
export const TagCursorParam = Schema.String.pipe(
  Schema.decodeTo(
    PetTag,
    SchemaTransformation.transformEffect({ decode: tagCursor.decode, encode: (tag: string) => Effect.succeed(tagCursorOf(tag)) })
  )
)

/** The cursor of a page of pets. */
export const CursorParam = cursorParam(PetId)
/** The cursor of a page of orders. */
export const OrderCursorParam = cursorParam(OrderId)
/** The cursor of a page of webhook delivery attempts. */
export const DeliveryCursorParam = cursorParam(DeliveryId)

/** An event id in a query (`after`) or in `Last-Event-ID`: plain decimal digits. */
export const EventIdParam = Schema.String.check(
  Schema.isPattern(DIGITS, { message: "expected an event id (decimal digits)" })
).pipe(Schema.decodeTo(EventId, SchemaTransformation.transform({ decode: BigInt, encode: String })))

/** A photo's id in a URL path. */
export const PhotoIdParam = idParam(PhotoId)
