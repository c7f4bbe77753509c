import { FindMyWay } from "effect/http"
import { HttpApi, type HttpApiGroup } from "effect/http-api"

/** Which route patterns exist for which methods: what the router knows but does not expose. */
export interface RouteTable {
  /** The route pattern (e.g. `/v1/pets/:petId`) that serves `method` at `path`, if any. */
  readonly match: (method: string, path: string) => string | undefined
  /** Methods served at `path` (HEAD wherever GET is), for a 405's `Allow` header. */
  readonly allowed: (path: string) => ReadonlyArray<string>
}

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
  const router = FindMyWay.make<string>()
  const add = (method: string, path: string) => {
    const pattern = path as `/${string}`
    router.on(method, pattern, path)
    // The HTTP router answers HEAD for every GET route.
    if (method === "GET") router.on("HEAD", pattern, path)
  }
  HttpApi.reflect(api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) => add(endpoint.method, endpoint.path)
  })
  for (const [method, path] of extra) add(method, path)
  return {
    match: (method, path) => router.find(method, path)?.handler,
    allowed: (path) => METHODS.filter((method) => router.find(method, path) !== undefined)
  }
}
