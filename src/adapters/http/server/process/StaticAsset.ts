/**
 * Responses that stay the same for the life of the process: the OpenAPI document and the
 * docs page (3.1 MB, Scalar inlined). The route's first response is compressed once,
 * with brotli and gzip, and every request then gets the encoding its `Accept-Encoding`
 * prefers (`Vary: Accept-Encoding`), an `ETag` per encoding and 304 for a matching
 * `If-None-Match`. `Cache-Control: no-cache` lets clients keep it and revalidate for free,
 * so a new deployment is seen at once.
 */
import { Effect } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { createHash } from "node:crypto"
import { promisify } from "node:util"
import { brotliCompress, constants, gzip } from "node:zlib"

const brotli = promisify(brotliCompress)
const gzipped = promisify(gzip)

/** The revalidation policy of every static response. */
export const CACHE_CONTROL = "public, no-cache"

/** Server preference: brotli is about 12% smaller than gzip on the docs page. */
const ENCODINGS = ["br", "gzip"] as const
type Encoding = typeof ENCODINGS[number]

interface Variant {
  readonly body: Uint8Array
  readonly etag: string
  readonly encoding: Encoding | undefined
}

interface Asset {
  readonly contentType: string
  readonly identity: Variant
  readonly encoded: Readonly<Record<Encoding, Variant>>
}

const makeAsset = async (body: Uint8Array, contentType: string): Promise<Asset> => {
  const hash = createHash("sha256").update(body).digest("base64url").slice(0, 27)
  // Quality 9: 0.3 s once for the docs page; 11 would take 5 s for 10% less.
  const [br, gz] = await Promise.all([
    brotli(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 9, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } }),
    gzipped(body, { level: 9 })
  ])
  return {
    contentType,
    identity: { body, etag: `"${hash}"`, encoding: undefined },
    encoded: {
      br: { body: br, etag: `"${hash}-br"`, encoding: "br" },
      gzip: { body: gz, etag: `"${hash}-gzip"`, encoding: "gzip" }
    }
  }
}

/** The q-value `Accept-Encoding` gives `encoding` (0 when not listed). */
const qualityOf = (acceptEncoding: string, encoding: Encoding): number => {
  let wildcard = 0
  for (const part of acceptEncoding.split(",")) {
    const [name = "", ...params] = part.split(";").map((piece) => piece.trim().toLowerCase())
    const q = params.find((param) => param.startsWith("q="))
    const quality = q === undefined ? 1 : Number(q.slice(2)) || 0
    if (name === encoding) return quality
    if (name === "*") wildcard = quality
  }
  return wildcard
}

const select = (asset: Asset, acceptEncoding: string | undefined): Variant => {
  if (acceptEncoding === undefined) return asset.identity
  for (const encoding of ENCODINGS) {
    if (qualityOf(acceptEncoding, encoding) > 0) return asset.encoded[encoding]
  }
  return asset.identity
}

// If-None-Match compares weakly (RFC 9110 13.1.2): W/"x" matches "x".
const matches = (ifNoneMatch: string | undefined, etag: string) =>
  ifNoneMatch !== undefined &&
  (ifNoneMatch.trim() === "*" || ifNoneMatch.split(",").some((tag) => tag.trim().replace(/^W\//, "") === etag))

const respond = (asset: Asset, request: HttpServerRequest.HttpServerRequest) => {
  const variant = select(asset, request.headers["accept-encoding"])
  const headers: Record<string, string> = { etag: variant.etag, "cache-control": CACHE_CONTROL, vary: "Accept-Encoding" }
  if (matches(request.headers["if-none-match"], variant.etag)) return HttpServerResponse.empty({ status: 304, headers })
  if (variant.encoding !== undefined) headers["content-encoding"] = variant.encoding
  return HttpServerResponse.uint8Array(variant.body, { contentType: asset.contentType, headers })
}

/**
 * Route middleware for routes whose successful response never changes: provide its
 * `layer` to the routes' layer. The first request builds the asset; concurrent first
 * requests share that one build.
 */
export const middleware = HttpRouter.middleware((app) => {
  const asset = Effect.runSync(Effect.cached(Effect.flatMap(app, ({ body }) =>
    body._tag === "Uint8Array"
      ? Effect.promise(() => makeAsset(body.body, body.contentType))
      : Effect.die(new Error("a static asset needs a response with its body in memory"))
  )))
  return Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    return respond(yield* asset, request)
  })
})
