/**
 * The interactive docs page (Scalar). HttpApiScalar loads its bundled script (3 MB, about
 * 18 MB of resident memory once loaded) when its layer is built; this route builds that
 * layer on the first `GET` of the page instead, so a service nobody reads the docs of
 * never loads it.
 */
import { Context, Effect, Layer, Scope } from "effect"
import { HttpRouter } from "effect/http"
import { HttpApiScalar } from "effect/http-api"
import type { Api } from "../api/Api.ts"

export const layer = (api: typeof Api, path: `/${string}`) =>
  HttpRouter.use(Effect.fnUntraced(function*(router) {
    // The page lives as long as the router that serves it.
    const scope = yield* Effect.scope
    // On a router of its own: the page's layer would otherwise find this one, already built.
    const page = yield* Effect.cached(
      Layer.build(HttpApiScalar.layer(api, {
        path,
        // "Test Request" starts with the bearer key field, not an empty auth choice.
        scalar: { authentication: { preferredSecurityScheme: "bearerAuth" } }
      }).pipe(Layer.provideMerge(Layer.fresh(HttpRouter.layer)))).pipe(
        Effect.map((context) => Context.get(context, HttpRouter.HttpRouter).asHttpEffect()),
        Scope.provide(scope)
      )
    )
    yield* router.add("GET", path, Effect.flatten(page))
  }))
