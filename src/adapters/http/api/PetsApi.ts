import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { CategoryId } from "../../../domain/pets/CategoryId.ts"
import { PetId } from "../../../domain/pets/PetId.ts"
import { PetName } from "../../../domain/pets/PetName.ts"
import { PetStatus } from "../../../domain/pets/PetStatus.ts"
import {
  Gone,
  IdempotencyKeyInUse,
  IdempotencyKeyReused,
  Internal,
  InvalidRequest,
  NotFound,
  PayloadTooLarge,
  RateLimited,
  ServiceUnavailable,
  UnsupportedMediaType
} from "./ApiErrors.ts"
import { Authorization } from "./Authorization.ts"
import { IDEMPOTENCY_DESCRIPTION, IdempotencyKeyHeaders } from "./IdempotencyKeyHeader.ts"
import { JsonContentType } from "./JsonContentType.ts"
import { jsonInt64, LosslessJsonBody } from "./JsonInt64.ts"
import { CursorParam, LimitParam, PetIdParam } from "./PathAndQuery.ts"
import { RequestValidation } from "./RequestValidation.ts"
import { WriteScope } from "./WriteScope.ts"

/** A pet on the wire: int64 fields are bare JSON integers with every digit. */
export const PetJson = Schema.Struct({
  id: jsonInt64(PetId),
  name: PetName,
  categoryId: jsonInt64(CategoryId),
  status: Schema.optionalKey(PetStatus)
}).annotate({ identifier: "Pet" })

/** A page of pets. */
export const PetsJson = Schema.Array(PetJson).annotate({ identifier: "Pets" })

/**
 * Most JSON values a request body may hold. A create needs 4 (5 with an ignored `id`);
 * a classic petstore Pet with its category, photo URLs and tags about 30.
 */
export const MAX_BODY_VALUES = 100

/** The createPet body. Unknown keys, including a client-supplied `id`, are ignored. */
export const NewPetJson = Schema.Struct({
  name: PetName,
  categoryId: jsonInt64(CategoryId),
  status: Schema.optionalKey(PetStatus)
})

/**
 * The pet operations of the spec, under bearer authentication. The group keeps the spec's
 * name, `animals`: it is the OpenAPI tag and the typed client's `client.animals`.
 */
export class PetsGroup extends HttpApiGroup.make("animals")
  .add(
    HttpApiEndpoint.get("listPets", "/pets", {
      query: {
        limit: Schema.optionalKey(LimitParam),
        status: Schema.optionalKey(PetStatus),
        cursor: Schema.optionalKey(CursorParam)
      },
      success: HttpApiSchema.WithHeaders(LosslessJsonBody(PetsJson), {
        link: Schema.optionalKey(Schema.String)
      }),
      error: [InvalidRequest, RateLimited, ServiceUnavailable, Internal]
    }).annotateMerge(OpenApi.annotations({
      identifier: "listPets",
      summary: "List animals",
      description: "Pets in ascending id order. When more exist, a `Link: <...>; rel=\"next\"` header " +
        "points at the next page (keyset cursor); the body stays a plain array."
    })),
    HttpApiEndpoint.post("createPet", "/pets", {
      headers: IdempotencyKeyHeaders,
      payload: LosslessJsonBody(NewPetJson, { maxValues: MAX_BODY_VALUES }),
      success: HttpApiSchema.WithHeaders(LosslessJsonBody(PetJson).pipe(HttpApiSchema.status(201)), {
        location: Schema.String
      }),
      error: [
        InvalidRequest,
        IdempotencyKeyInUse,
        IdempotencyKeyReused,
        PayloadTooLarge,
        UnsupportedMediaType,
        RateLimited,
        ServiceUnavailable,
        Internal
      ]
    }).middleware(JsonContentType)
      // Added after JsonContentType, so it runs before it: 403 comes before any look at the input.
      .middleware(WriteScope)
      .annotateMerge(OpenApi.annotations({
        identifier: "createPet",
        summary: "Add an animal",
        description: "Stores a new pet; the store assigns its id (a client-supplied `id` and any other unknown " +
          "field is ignored). Answers 201 with the pet and its `Location`. " + IDEMPOTENCY_DESCRIPTION
      })),
    HttpApiEndpoint.get("getPet", "/pets/:petId", {
      params: { petId: PetIdParam },
      success: LosslessJsonBody(PetJson),
      error: [InvalidRequest, NotFound, Gone, RateLimited, ServiceUnavailable, Internal]
    }).annotateMerge(OpenApi.annotations({
      identifier: "getPet",
      summary: "Get an animal (deprecated)",
      description: "Deprecated; removed on 5 December 2030 (410 Gone from then on). Use GET /pets with the status filter.",
      deprecated: true
    }))
  )
  .middleware(RequestValidation)
  .middleware(Authorization)
  .annotateMerge(OpenApi.annotations({ description: "The animals the store offers." }))
{}
