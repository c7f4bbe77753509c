import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { CategoryId } from "../../../domain/pets/CategoryId.ts"
import { PetId } from "../../../domain/pets/PetId.ts"
import { PetName } from "../../../domain/pets/PetName.ts"
import { SearchText } from "../../../domain/pets/PetSearch.ts"
import { PetStatus } from "../../../domain/pets/PetStatus.ts"
import { PET_TAGS_MAX, PetTag, PetTags } from "../../../domain/pets/PetTag.ts"
import { PetVersion } from "../../../domain/pets/PetVersion.ts"
import {
  Gone,
  IDEMPOTENT_CREATE_ERRORS,
  Internal,
  InvalidRequest,
  NotFound,
  PayloadTooLarge,
  PetHasOpenOrderConflict,
  PreconditionFailed,
  RateLimited,
  ServiceUnavailable,
  UnsupportedMediaType
} from "./ApiErrors.ts"
import { Authorization } from "./Authorization.ts"
import { IDEMPOTENCY_DESCRIPTION, IdempotencyKeyHeaders } from "./IdempotencyKeyHeader.ts"
import { JsonContentType, MERGE_PATCH_MEDIA_TYPE } from "./JsonContentType.ts"
import { jsonInt, jsonInt64, LosslessJsonBody } from "./JsonInt64.ts"
import { CursorParam, LimitParam, PetIdParam, TagCursorParam } from "./PathAndQuery.ts"
import { IfMatchHeaders } from "./PetEntityTag.ts"
import { RequestValidation } from "./RequestValidation.ts"
import { WriteScope } from "./WriteScope.ts"
import { patchBody } from "./PatchBody.ts"
import { PageBody } from "./PageBody.ts"

/**
 * A pet on the wire: int64 fields are bare JSON integers with every digit; `version` is
 * what its `ETag` carries, so that a listed pet's ETag is known without reading it alone.
 */
export const PetJson = Schema.Struct({
  id: jsonInt64(PetId),
  name: PetName,
  categoryId: jsonInt64(CategoryId),
  status: Schema.optionalKey(PetStatus),
  tags: PetTags.annotate({
    description: `The pet's tags, in the order they were given: at most ${PET_TAGS_MAX} lowercase slugs, each once; ` +
      "`[]` when it has none."
  }),
  version: jsonInt(PetVersion, {
    minimum: 1,
    description: "The pet's version: 1 at creation, one more with every change of the pet. Its `ETag` is " +
      "`\"<version>\"` (version 3: `\"3\"`), what `If-Match` takes to change it only if it is unchanged."
  })
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
  status: Schema.optionalKey(PetStatus),
  tags: Schema.optionalKey(PetTags)
})

/** The updatePet body's fields (RFC 7396): each with the rules of a create; `status: null` removes the status. */
export const PetPatchFieldsJson = Schema.Struct({
  name: Schema.optionalKey(NewPetJson.fields.name),
  categoryId: Schema.optionalKey(NewPetJson.fields.categoryId),
  status: Schema.optionalKey(Schema.NullOr(PetStatus)),
  tags: Schema.optionalKey(NewPetJson.fields.tags.schema.annotate({
    description: "Replaces the pet's tags (RFC 7396 replaces an array whole); `[]` removes them all."
  }))
})

/** The updatePet body: a JSON object of {@link PetPatchFieldsJson}'s fields and no other (`id` included). */
export const PetPatchJson = patchBody(PetPatchFieldsJson)

/** A tag in use and how many pets carry it. */
export const TagCountJson = Schema.Struct({
  tag: PetTag,
  pets: jsonInt(Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)), { minimum: 1, description: "How many pets carry the tag." })
}).annotate({ identifier: "TagCount" })

/** A page of the tags in use. */
export const TagCountsJson = Schema.Array(TagCountJson).annotate({ identifier: "TagCounts" })

/** A pet answer's headers: its `ETag`, which `If-Match` names. */
const ETagHeader = { etag: Schema.String }

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
        tag: Schema.optionalKey(PetTags.annotate({
          description: `Only the pets that carry every one of these tags (repeat the parameter: ` +
            `\`tag=cat&tag=young\`; at most ${PET_TAGS_MAX}, each once).`
        })),
        q: Schema.optionalKey(SearchText.annotate({
          description: "Only the pets whose name contains this text, case and accents aside (`zoe` finds " +
            "\"Zoë\"); 2 to 64 characters."
        })),
        cursor: Schema.optionalKey(CursorParam)
      },
      success: PageBody(PetsJson),
      error: [InvalidRequest, RateLimited, ServiceUnavailable, Internal]
    }).annotateMerge(OpenApi.annotations({
      identifier: "listPets",
      summary: "List animals",
      description: "Pets in ascending id order, optionally only those in a `status`, carrying every `tag` " +
        "given, and whose name contains `q`; the filters combine. When more exist, a `Link: <...>; rel=\"next\"` header " +
        "points at the next page (keyset cursor, the filters repeated); the body stays a plain array. Each pet's `version` gives its " +
        "`ETag`, `\"<version>\"`: send it as `If-Match` to `updatePet` or `deletePet` to change the pet only if it " +
        "is unchanged, with no read of the pet alone."
    })),
    HttpApiEndpoint.get("listTags", "/tags", {
      query: {
        limit: Schema.optionalKey(LimitParam),
        cursor: Schema.optionalKey(TagCursorParam)
      },
      success: PageBody(TagCountsJson),
      error: [InvalidRequest, RateLimited, ServiceUnavailable, Internal]
    }).annotateMerge(OpenApi.annotations({
      identifier: "listTags",
      summary: "List the tags in use",
      description: "The tags that pets carry (retired pets aside), each with how many pets carry it, in ascending " +
        "order of the tag (byte order: `-` before digits before letters). The counts are kept as pets change, " +
        "so a page costs the same however many pets there are. When more exist, a `Link: <...>; rel=\"next\"` " +
        "header points at the next page."
    })),
    HttpApiEndpoint.post("createPet", "/pets", {
      headers: IdempotencyKeyHeaders,
      payload: LosslessJsonBody(NewPetJson, { maxValues: MAX_BODY_VALUES }),
      success: HttpApiSchema.WithHeaders(LosslessJsonBody(PetJson).pipe(HttpApiSchema.status(201)), {
        location: Schema.String,
        ...ETagHeader
      }),
      error: [
        InvalidRequest,
        ...IDEMPOTENT_CREATE_ERRORS
      ]
    }).middleware(JsonContentType)
      // Added after JsonContentType, so it runs before it: 403 comes before any look at the input.
      .middleware(WriteScope)
      .annotateMerge(OpenApi.annotations({
        identifier: "createPet",
        summary: "Add an animal",
        description: "Stores a new pet; the store assigns its id (a client-supplied `id` and any other unknown " +
          "field is ignored). Answers 201 with the pet (`version` 1) and its `Location` and `ETag`. " +
          IDEMPOTENCY_DESCRIPTION
      })),
    HttpApiEndpoint.get("getPet", "/pets/:petId", {
      params: { petId: PetIdParam },
      // Its ETag is sent and documented, not declared: declaring it would change what 1.x's raw client returns.
      success: LosslessJsonBody(PetJson),
      error: [InvalidRequest, NotFound, Gone, RateLimited, ServiceUnavailable, Internal]
    }).annotateMerge(OpenApi.annotations({
      identifier: "getPet",
      summary: "Get an animal (deprecated)",
      description: "Deprecated; removed on 5 December 2030 (410 Gone from then on). Use GET /pets with the status " +
        "filter: its pets carry their `version`, whose `\"<version>\"` is the `ETag` this answer sends.",
      deprecated: true
    })),
    HttpApiEndpoint.patch("updatePet", "/pets/:petId", {
      params: { petId: PetIdParam },
      headers: IfMatchHeaders,
      payload: LosslessJsonBody(PetPatchJson, { maxValues: MAX_BODY_VALUES, contentType: MERGE_PATCH_MEDIA_TYPE }),
      success: HttpApiSchema.WithHeaders(LosslessJsonBody(PetJson), ETagHeader),
      error: [
        InvalidRequest,
        NotFound,
        PreconditionFailed,
        PetHasOpenOrderConflict,
        PayloadTooLarge,
        UnsupportedMediaType,
        RateLimited,
        ServiceUnavailable,
        Internal
      ]
    }).middleware(JsonContentType)
      .middleware(WriteScope)
      .annotateMerge(OpenApi.annotations({
        identifier: "updatePet",
        summary: "Edit an animal",
        description: "A JSON Merge Patch (RFC 7396, `application/merge-patch+json`; `application/json` is accepted " +
          "too) of `name`, `categoryId` and `status`, with the rules of a create; `status: null` removes the status; " +
          "`id` and unknown fields are refused (400). Answers 200 with the pet after the change (its `version` one " +
          "more) and its new `ETag`. " +
          "With `If-Match`, a pet changed since is 412; a status change while an order for the pet is open is 409 " +
          "`pet_has_open_order` (orders own the status until they close)."
      })),
    HttpApiEndpoint.delete("deletePet", "/pets/:petId", {
      params: { petId: PetIdParam },
      headers: IfMatchHeaders,
      success: HttpApiSchema.NoContent,
      error: [
        InvalidRequest,
        NotFound,
        PreconditionFailed,
        PetHasOpenOrderConflict,
        RateLimited,
        ServiceUnavailable,
        Internal
      ]
    }).middleware(WriteScope)
      .annotateMerge(OpenApi.annotations({
        identifier: "deletePet",
        summary: "Retire an animal",
        description: "Answers 204. The pet is then 404, in no list or inventory count, and cannot be ordered; " +
          "orders that name it stay readable. With `If-Match`, a pet changed since is 412; while an order for " +
          "the pet is open, 409 `pet_has_open_order`."
      }))
  )
  .middleware(RequestValidation)
  .middleware(Authorization)
  .annotateMerge(OpenApi.annotations({ description: "The animals the store offers." }))
{}
