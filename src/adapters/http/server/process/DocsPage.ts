/**
 * The interactive docs page (Scalar). HttpApiScalar loads its bundled script (3 MB, about
 * 18 MB of resident memory once loaded) when its layer is built; this route builds that
 * layer when the page is asked for instead, so a service nobody reads the docs of never
 * loads it. Serve it under StaticAsset.middleware, which asks for the page once and keeps
 * the answer.
 */
import { Context, Effect, Layer } from "effect"
import { HttpBody, HttpRouter, HttpServerResponse } from "effect/http"
import { HttpApiScalar } from "effect/http-api"
import type { Api } from "../../api/Api.ts"
import * as ExactIntegerJson from "./ExactIntegerJson.ts"

// HttpApiScalar has no option for a script of the page's own: it goes at the end of the
// head, so it runs before Scalar's script in the body.
const withExactIntegers = (response: HttpServerResponse.HttpServerResponse) =>
  response.body._tag === "Uint8Array"
    ? Effect.succeed(HttpServerResponse.setBody(
      response,
      HttpBody.text(
        new TextDecoder().decode(response.body.body).replace(
          "</head>",
          () => `<script>${ExactIntegerJson.script}</script></head>`
        ),
        response.body.contentType
      )
    ))
    : Effect.die(new Error("the docs page needs its HTML in memory"))

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
      (context) => Effect.flatMap(Context.get(context, HttpRouter.HttpRouter).asHttpEffect(), withExactIntegers)
    ))
  )
