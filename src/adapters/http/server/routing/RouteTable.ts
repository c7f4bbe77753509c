import { Context } from "effect"
import { FindMyWay } from "effect/http"
import { HttpApi, type HttpApiGroup, OpenApi } from "effect/http-api"

/** A route the service serves. */
export interface Route {
  /** The route pattern, e.g. `/v1/pets/:petId`. */
  readonly pattern: string
  /** The OpenAPI operationId for an API endpoint, else the pattern: a bounded label for metrics. */
  readonly operation: string
  /** Whether the endpoint is annotated `deprecated`: its answers carry the deprecation headers. */
  readonly deprecated: boolean
  /**
   * Whether the endpoint takes a body of bytes (an upload, HttpApiSchema.StreamUint8Array),
   * which the router bounds with a limit of its own instead of the JSON bodies' one.
   */
  readonly rawBody: boolean
}

/** Which route patterns exist for which methods: what the router knows but does not expose. */
export interface RouteTable {
  /** The route that serves `method` at `path`, if any. */
  readonly match: (method: string, path: string) => Route | undefined
  /** Methods served at `path` (HEAD wherever GET is), for a 405's `Allow` header. */
  readonly allowed: (path: string) => ReadonlyArray<string>
}

/**
 * How the service's router is configured: HttpRouter's default caps a path parameter at
 * 100 characters and answers a longer one 404 before authentication and validation run;
 * an id that long is a 400 like any other bad id. The request head is bounded elsewhere
 * (16 KiB in NodeServer). Pass it to `HttpRouter.serve` / `toWebHandler` as `routerConfig`.
 */
export const ROUTER_CONFIG = { maxParamLength: 16 * 1024 } as const

/** The path of a request URL as the router sees it: everything before `?` or `#`. */
export const pathOf = (url: string): string => {
  const end = url.search(/[?#]/)
  return end === -1 ? url : url.slice(0, end)
}

const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const

/** Builds the table from an HttpApi's endpoints plus the routes mounted beside it. */
export const make = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>,
  extra: ReadonlyArray<readonly [method: string, path: `/${string}`]>
): RouteTable => {
  const router = FindMyWay.make<Route>(ROUTER_CONFIG)
  const add = (method: string, path: string, operation: string, deprecated = false, rawBody = false) => {
    const route: Route = { pattern: path, operation, deprecated, rawBody }
    router.on(method, path as `/${string}`, route)
    // The HTTP router answers HEAD for every GET route.
    if (method === "GET") router.on("HEAD", path as `/${string}`, route)
  }
  HttpApi.reflect(api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, mergedAnnotations }) =>
      add(
        endpoint.method,
        endpoint.path,
        endpoint.identifier,
        Context.getOrElse(mergedAnnotations, OpenApi.Deprecated, () => false),
        [...endpoint.payload.values()].some(({ schemas }) =>
          schemas.some((schema) => (schema as { readonly _tag?: unknown })._tag === "StreamUint8Array"))
      )
  })
  for (const [method, path] of extra) add(method, path, path)
  return {
    match: (method, path) => router.find(method, path)?.handler,
    allowed: (path) => METHODS.filter((method) => router.find(method, path) !== undefined)
  }
}
