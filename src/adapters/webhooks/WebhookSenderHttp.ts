import { Duration, Effect, Layer, Result } from "effect"
import { lookup as dnsLookup } from "node:dns/promises"
import * as http from "node:http"
import * as https from "node:https"
import type { LookupFunction } from "node:net"
import { signatureHeaders } from "../../application/webhooks/WebhookSignature.ts"
import { InvalidInput } from "../../domain/Errors.ts"
import { type AttemptResult, DELIVERY_ERROR_MAX_LENGTH } from "../../domain/webhooks/DeliveryAttempt.ts"
import { parseAddress, refusedAddress } from "../../domain/webhooks/WebhookAddress.ts"
import { checkWebhookUrl } from "../../domain/webhooks/WebhookUrl.ts"
import { type WebhookDelivery, WebhookSender } from "../../ports/webhooks/WebhookSender.ts"
import * as Spans from "../observability/Spans.ts"

/** An address a host name resolves to. */
export interface ResolvedAddress {
  readonly address: string
  readonly family: 4 | 6
}

/** Resolves a host name to every address it has (the system resolver unless a test gives its own). */
export type Resolver = (hostname: string) => Promise<ReadonlyArray<ResolvedAddress>>

/** Longest a delivery may take, connection, request and answer together. */
export const DELIVERY_TIMEOUT = Duration.seconds(5)
/** Most bytes of an answer's body read; the rest is dropped with the connection. */
export const ANSWER_BYTES_MAX = 64 * 1024

export interface Options {
  /** WEBHOOK_ALLOW_PRIVATE: private addresses and plain http may be reached (development, tests). */
  readonly allowPrivate: boolean
  readonly resolve?: Resolver | undefined
  readonly timeout?: Duration.Duration | undefined
}

const systemResolver: Resolver = async (hostname) =>
  (await dnsLookup(hostname, { all: true, verbatim: true })).map(({ address, family }) => ({
    address,
    family: family === 6 ? 6 : 4
  }))

/**
 * A destination refused: its URL or one of its addresses. Final: at delivery it is
 * `gone`, and the subscription is disabled, since every retry would meet the same rules.
 */
class Refused extends Error {}

/**
 * A host name that resolved to no address at all. Not a refusal: DNS may answer
 * otherwise later (a record being replaced, a zone being fixed), so at delivery it is
 * retried like a name that does not resolve; when subscribing it is refused all the same.
 */
class NoAddress extends Error {}

const bounded = (text: string) => text.length <= DELIVERY_ERROR_MAX_LENGTH ? text : `${text.slice(0, DELIVERY_ERROR_MAX_LENGTH - 1)}…`

/**
 * Delivers webhooks over node:http(s). A host name is resolved here, every address it
 * has is checked (one refused address refuses the host: which one a connection would
 * use is not ours to choose), and the connection goes to the address checked, through
 * the request's own `lookup`, so a second resolution (DNS rebinding) cannot send it
 * elsewhere. Redirects are not followed (a 3xx is a failure): following one would reach
 * an address nobody checked.
 *
 * A URL the rules refuse at delivery (WEBHOOK_ALLOW_PRIVATE turned off since it was
 * subscribed, or a host that now resolves to a refused address) answers `gone` with the
 * reason and no status, as a 410 does: nothing is sent. A name that does not resolve,
 * or resolves to no address, is a `retry`.
 */
export const make = (options: Options) => {
  const resolve = options.resolve ?? systemResolver
  const timeoutMillis = Duration.toMillis(options.timeout ?? DELIVERY_TIMEOUT)

  // The address to connect to for `url`, checked; Refused when the URL or its host is not allowed,
  // NoAddress when the name resolves to nothing, and the resolver's own error when it fails.
  // The URL rules again at delivery: WEBHOOK_ALLOW_PRIVATE may have been turned off since.
  const destination = async (url: URL): Promise<ResolvedAddress> => {
    const rules = checkWebhookUrl(url.href, options)
    if (Result.isFailure(rules)) throw new Refused(`the URL ${rules.failure}`)
    const literal = parseAddress(url.hostname)
    const addresses: ReadonlyArray<ResolvedAddress> = literal !== undefined
      ? [{ address: url.hostname.replace(/^\[|\]$/g, ""), family: literal._tag === "Ipv4Address" ? 4 : 6 }]
      : await resolve(url.hostname)
    if (addresses.length === 0) throw new NoAddress(`${url.hostname} has no address`)
    if (!options.allowPrivate) {
      for (const { address } of addresses) {
        const parsed = parseAddress(address)
        const refused = parsed === undefined ? "unparseable" : refusedAddress(parsed)
        if (refused !== undefined) throw new Refused(`${url.hostname} resolves to ${address}, a ${refused} address`)
      }
    }
    return addresses[0]!
  }

  const check = Spans.method("WebhookSender.check", (raw: string) =>
    Effect.gen(function*() {
      const url = yield* Effect.fromResult(
        Result.mapError(checkWebhookUrl(raw, options), (why) => new InvalidInput({ message: `url: ${why}` }))
      )
      yield* Effect.tryPromise({
        try: () => destination(new URL(url)),
        catch: (error) =>
          new InvalidInput({
            message: error instanceof Refused || error instanceof NoAddress
              ? `url: ${error.message}`
              : `url: the host ${new URL(url).hostname} could not be resolved`
          })
      })
      return url
    })
  )

  // `signal` aborts when the send is interrupted (a shutdown): its connection goes at once
  // instead of lingering, still able to deliver, until the timeout.
  const attempt = (delivery: WebhookDelivery, started: number, signal: AbortSignal): Promise<AttemptResult> =>
    new Promise((resolveResult) => {
      const url = new URL(delivery.url)
      let settled = false
      const done = (result: Omit<AttemptResult, "durationMs">) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        request?.destroy()
        resolveResult({ ...result, durationMs: Math.max(0, Math.round(performance.now() - started)), error: result.error === undefined ? undefined : bounded(result.error) })
      }
      const failed = (error: string, httpStatus?: number) => done({ outcome: "retry", httpStatus, error })
      let request: http.ClientRequest | undefined
      const timer = setTimeout(() => failed(`no complete answer within ${Duration.format(Duration.millis(timeoutMillis))}`), timeoutMillis)
      signal.addEventListener("abort", () => failed("interrupted"), { once: true })

      destination(url).then((target) => {
        if (settled) return
        // The connection goes to the checked address, whatever the name resolves to now.
        const lookup: LookupFunction = (_hostname, lookupOptions, callback) =>
          lookupOptions.all === true
            ? callback(null, [{ address: target.address, family: target.family }])
            : callback(null, target.address, target.family)
        const headers = {
          "content-type": "application/json",
          "user-agent": "animal-store-webhooks",
          ...signatureHeaders(
            { id: delivery.messageId, timestamp: Math.floor(Date.now() / 1000), body: delivery.body },
            delivery.secrets
          )
        }
        const send = url.protocol === "https:" ? https.request : http.request
        request = send(url, { method: "POST", headers, lookup, agent: false }, (answer) => {
          const status = answer.statusCode ?? 0
          let read = 0
          const finish = () => {
            if (status >= 200 && status < 300) done({ outcome: "delivered", httpStatus: status, error: undefined })
            else if (status === 410) done({ outcome: "gone", httpStatus: status, error: "410 Gone: the receiver asks to stop" })
            else if (status >= 300 && status < 400) failed(`${status} redirect, not followed`, status)
            else failed(`${status} ${answer.statusMessage ?? ""}`.trim(), status)
          }
          // The body is read (up to the cap) so that the whole answer arrives in time, then dropped.
          answer.on("data", (chunk: Buffer) => {
            read += chunk.length
            if (read >= ANSWER_BYTES_MAX) finish()
          })
          answer.on("end", finish)
          answer.on("error", (error) => failed(`the answer broke off: ${error.message}`, status))
        })
        request.on("error", (error) => failed(error.message))
        request.end(delivery.body)
      }, (error: unknown) =>
        // A refused URL or address is final (the dispatcher disables the subscription, with
        // this reason); a resolver that fails or finds no address is tried again.
        error instanceof Refused
          ? done({ outcome: "gone", httpStatus: undefined, error: error.message })
          : failed(error instanceof Error ? error.message : String(error)))
    })

  const send = Spans.method("WebhookSender.send", (delivery: WebhookDelivery) =>
    Effect.promise((signal) => attempt(delivery, performance.now(), signal))
  )

  return WebhookSender.of({ check, send })
}

/** A WebhookSender over node:http(s). */
export const layer = (options: Options): Layer.Layer<WebhookSender> => Layer.succeed(WebhookSender)(make(options))
