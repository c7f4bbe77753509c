import { Result, Schema } from "effect"
import { parseAddress, refusedAddress } from "./WebhookAddress.ts"

/** Longest webhook URL accepted, in characters. */
export const WEBHOOK_URL_MAX_LENGTH = 2048

/** A webhook's target URL as stored: already checked by {@link checkWebhookUrl}. */
export const WebhookUrl = Schema.String.check(
  Schema.isMinLength(1),
  Schema.isMaxLength(WEBHOOK_URL_MAX_LENGTH, { message: `must be at most ${WEBHOOK_URL_MAX_LENGTH} characters` })
).pipe(Schema.brand("WebhookUrl"))
/** A value of {@link WebhookUrl}. */
export type WebhookUrl = typeof WebhookUrl.Type

/**
 * The rules a webhook URL must meet that need no I/O: an absolute http(s) URL, https
 * unless private addresses are allowed (development, tests), no user or password (the
 * signature authenticates deliveries; a credential in a URL leaks into every log), no
 * fragment, at most {@link WEBHOOK_URL_MAX_LENGTH} characters, and a host that is not an
 * IP address of a refused kind (see WebhookAddress). A host name is checked once
 * resolved, at subscription and again at each delivery.
 *
 * Succeeds with the URL in its normal form (WHATWG serialization), fails with why not.
 */
export const checkWebhookUrl = (
  raw: string,
  options: { readonly allowPrivate: boolean }
): Result.Result<WebhookUrl, string> => {
  if (raw.length > WEBHOOK_URL_MAX_LENGTH) return Result.fail(`must be at most ${WEBHOOK_URL_MAX_LENGTH} characters`)
  if (!URL.canParse(raw)) return Result.fail("must be an absolute URL")
  const url = new URL(raw)
  if (url.protocol !== "https:" && url.protocol !== "http:") return Result.fail("must be an http or https URL")
  if (url.protocol === "http:" && !options.allowPrivate) return Result.fail("must be an https URL")
  if (url.username !== "" || url.password !== "") return Result.fail("must not contain a user name or password")
  if (url.hash !== "") return Result.fail("must not contain a fragment")
  if (url.hostname === "") return Result.fail("must name a host")
  const address = parseAddress(url.hostname)
  const refused = address === undefined || options.allowPrivate ? undefined : refusedAddress(address)
  if (refused !== undefined) return Result.fail(`must not point at a ${refused} address`)
  const normal = url.href
  if (normal.length > WEBHOOK_URL_MAX_LENGTH) return Result.fail(`must be at most ${WEBHOOK_URL_MAX_LENGTH} characters`)
  return Result.succeed(normal as WebhookUrl)
}
