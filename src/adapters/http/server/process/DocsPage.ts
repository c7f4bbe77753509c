/**
 * The interactive docs page (Scalar). HttpApiScalar loads its bundled script (3 MB, about
 * 18 MB of resident memory once loaded) when its layer is built; this route builds that
 * layer when the page is asked for instead, so a service nobody reads the docs of never
 * loads it. Serve it under StaticAsset.middleware, which asks for the page once and keeps
 * the answer.
 */
import { Context, Effect, Layer } from "effect"
import { HttpRouter } from "effect/http"
import { HttpApiScalar } from "effect/http-api"
import type { Api } from "../../api/Api.ts"

export const layer = (api: typeof Api, path: `/${string}`) =>
  HttpRouter.add(
    "GET",
    path,
    Effect.scoped(Effect.flatMap(
      // On a router of its own: the page's layer would otherwise find the service's, already built.
      Layer.build(HttpApiScalar.layer(api, {
        path,
        scalar: {
          // "Test Request" starts with the bearer key field, not an empty auth choice.
          authentication: { preferredSecurityScheme: "bearerAuth" },
          // Scalar's default fonts come from fonts.scalar.com; without them the page asks no
          // other host for anything (it works offline) and uses the system's fonts.
          withDefaultFonts: false
        }
      }).pipe(Layer.provideMerge(Layer.fresh(HttpRouter.layer)))),
      (context) => Context.get(context, HttpRouter.HttpRouter).asHttpEffect()
    ))
  )
