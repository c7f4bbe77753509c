import { Clock, Effect, Schema } from "effect"
import { HttpApiBuilder, HttpApiSchema } from "effect/http-api"
import { Gone } from "../../../domain/Errors.ts"
import { NewPet } from "../../../domain/NewPet.ts"
import { PAGE_LIMIT_DEFAULT } from "../../../domain/PetQuery.ts"
import { PetRepository } from "../../../ports/PetRepository.ts"
import { Api } from "../api/Api.ts"
import { CursorParam } from "../api/PathAndQuery.ts"
import { SUNSET } from "../api/Sunset.ts"
import { toHttpError } from "./HttpErrors.ts"

const encodeCursor = Schema.encodeSync(CursorParam)

/** The `animals` operations, on whichever PetRepository is provided. */
export const layer = HttpApiBuilder.group(
  Api,
  "animals",
  Effect.fn(function*(handlers) {
    const pets = yield* PetRepository

    return handlers.handleAll({
      listPets: ({ query }) =>
        Effect.gen(function*() {
          const limit = query.limit ?? PAGE_LIMIT_DEFAULT
          // One extra row tells whether a next page exists without a count query.
          const rows = yield* pets.list({ limit: limit + 1, status: query.status, after: query.cursor })
          const page = rows.slice(0, limit)
          const last = page[page.length - 1]
          if (rows.length <= limit || last === undefined) return HttpApiSchema.withHeaders({ body: page, headers: {} })
          const next = new URLSearchParams({ limit: String(limit) })
          if (query.status !== undefined) next.set("status", query.status)
          next.set("cursor", encodeCursor(last.id))
          return HttpApiSchema.withHeaders({ body: page, headers: { link: `</v1/pets?${next}>; rel="next"` } })
        }).pipe(Effect.mapError(toHttpError)),

      createPet: ({ payload }) =>
        pets.create(new NewPet(payload, { disableChecks: true })).pipe(
          Effect.map((pet) => HttpApiSchema.withHeaders({ body: pet, headers: { location: `/v1/pets/${pet.id}` } })),
          Effect.mapError(toHttpError)
        ),

      getPet: ({ params }) =>
        Effect.gen(function*() {
          if ((yield* Clock.currentTimeMillis) >= SUNSET.epochMillis) {
            return yield* new Gone({
              message: `GET /v1/pets/{petId} was removed on ${SUNSET.httpDate}; use GET /v1/pets`
            })
          }
          return yield* pets.get(params.petId)
        }).pipe(Effect.mapError(toHttpError))
    })
  })
)
