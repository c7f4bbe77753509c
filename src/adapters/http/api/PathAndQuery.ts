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

const CURSOR_PREFIX = "after:"
const invalidCursor = (input: string) =>
  new SchemaIssue.InvalidValue({ message: "is not a cursor this service issued" }, input)

/**
 * The cursor of a page that ends at `id`: what the cursor schemas below encode, written
 * directly by the list handlers, which would otherwise run the schema's encoder (and a
 * fiber for its effectful transformation) on every page.
 */
export const cursorOf = (id: bigint): string => Buffer.from(`${CURSOR_PREFIX}${id}`, "utf8").toString("base64url")

/**
 * The opaque `cursor` of a next-page link: the last id of the previous page, so paging
 * is a keyset scan (no gaps or repeats when rows are added meanwhile).
 */
const cursorParam = <S extends Schema.Codec<bigint, bigint>>(id: S) =>
  Schema.String.pipe(
    Schema.decodeTo(
      id,
      SchemaTransformation.transformEffect({
        decode: (cursor: string) => {
          const text = Buffer.from(cursor, "base64url").toString("utf8")
          const digits = text.startsWith(CURSOR_PREFIX) ? text.slice(CURSOR_PREFIX.length) : ""
          return DIGITS.test(digits) && Buffer.from(text, "utf8").toString("base64url") === cursor
            ? Effect.succeed(BigInt(digits))
            : Effect.fail(invalidCursor(cursor))
        },
        encode: (id: bigint) => Effect.succeed(cursorOf(id))
      })
    )
  )

const TAG_CURSOR_PREFIX = "tag:"

/** The cursor of a page of tags that ends at `tag`: what {@link TagCursorParam} decodes. */
export const tagCursorOf = (tag: string): string => Buffer.from(`${TAG_CURSOR_PREFIX}${tag}`, "utf8").toString("base64url")

/** The opaque `cursor` of a next page of tags: the last tag of the previous page (tags are paged in tag order). */
export const TagCursorParam = Schema.String.pipe(
  Schema.decodeTo(
    PetTag,
    SchemaTransformation.transformEffect({
      decode: (cursor: string) => {
        const text = Buffer.from(cursor, "base64url").toString("utf8")
        const tag = text.startsWith(TAG_CURSOR_PREFIX) ? text.slice(TAG_CURSOR_PREFIX.length) : ""
        return PET_TAG.test(tag) && tagCursorOf(tag) === cursor ? Effect.succeed(tag) : Effect.fail(invalidCursor(cursor))
      },
      encode: (tag: string) => Effect.succeed(tagCursorOf(tag))
    })
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
