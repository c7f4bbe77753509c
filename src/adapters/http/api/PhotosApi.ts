import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { PetId } from "../../../domain/pets/PetId.ts"
import { ImageType } from "../../../domain/photos/ImageType.ts"
import { MAX_PHOTOS_PER_PET } from "../../../domain/photos/Photo.ts"
import { PhotoId } from "../../../domain/photos/PhotoId.ts"
import { Rendition, RENDITION_SIZE } from "../../../domain/photos/Rendition.ts"
import {
  Forbidden,
  IDEMPOTENT_CREATE_ERRORS,
  Internal,
  InvalidRequest,
  NotFound,
  RateLimited,
  ServiceUnavailable,
  TooManyPhotosConflict
} from "./ApiErrors.ts"
import { Authorization } from "./Authorization.ts"
import { IDEMPOTENCY_DESCRIPTION, IdempotencyKeyHeaders } from "./IdempotencyKeyHeader.ts"
import { jsonInt, jsonInt64, LosslessJsonBody } from "./JsonInt64.ts"
import { PetIdParam, PhotoIdParam } from "./PathAndQuery.ts"
import { EXPIRES_PARAM, PhotoUrlAuthorization, SIGNATURE_PARAM } from "./PhotoUrlAuthorization.ts"
import { RequestValidation } from "./RequestValidation.ts"
import { WriteScope } from "./WriteScope.ts"

/** The media types an upload's body may have besides a form. */
export const UPLOAD_IMAGE_TYPES = ImageType.literals

/** The media type of an upload from a form: one part named `file`. */
export const MULTIPART_FORM = "multipart/form-data"

const url = (rendition: Rendition, what: string) =>
  Schema.String.annotate({
    description: `The ${rendition} rendition (${what}): a signed URL, usable without a key (in an \`<img>\`) ` +
      "until its `expires`; list the photos again for fresh URLs."
  })

/** A photo on the wire: its record, and a signed URL per rendition. */
export const PhotoJson = Schema.Struct({
  id: jsonInt64(PhotoId),
  petId: jsonInt64(PetId),
  contentType: ImageType.annotate({ description: "The original's type: the upload's." }),
  width: jsonInt(Schema.Int, { minimum: 1, description: "The original's width in pixels, upright." }),
  height: jsonInt(Schema.Int, { minimum: 1, description: "The original's height in pixels, upright." }),
  bytes: jsonInt(Schema.Int, { minimum: 1, description: "The original's size in bytes, as stored (re-encoded)." }),
  createdAt: Schema.DateTimeUtcFromString,
  urls: Schema.Struct({
    original: url("original", "upright, without metadata, in its own type"),
    thumb: url("thumb", `WebP, within ${RENDITION_SIZE.thumb} × ${RENDITION_SIZE.thumb} pixels`),
    medium: url("medium", `WebP, within ${RENDITION_SIZE.medium} × ${RENDITION_SIZE.medium} pixels`)
  })
}).annotate({ identifier: "Photo" })

/** A pet's photos. */
export const PhotosJson = Schema.Array(PhotoJson).annotate({ identifier: "Photos" })

/** An upload's body: the image's bytes, as the image type, or in a form's `file` part. */
const ImageBody = HttpApiSchema.StreamUint8Array({ contentType: [...UPLOAD_IMAGE_TYPES] })
const FormBody = Schema.Struct({ file: Schema.Uint8Array }).pipe(
  HttpApiSchema.asMultipart()
).annotate({ description: "One part named `file`: the image (JPEG, PNG or WebP)." })

const RenditionBody = HttpApiSchema.StreamUint8Array({ contentType: [...UPLOAD_IMAGE_TYPES] })

const READ_ERRORS = [InvalidRequest, NotFound, RateLimited, ServiceUnavailable, Internal] as const

/** Pets' photos: uploaded, processed and kept by the store, served through signed URLs. */
export class PhotosGroup extends HttpApiGroup.make("photos")
  .add(
    HttpApiEndpoint.post("uploadPetPhoto", "/pets/:petId/photos", {
      params: { petId: PetIdParam },
      headers: IdempotencyKeyHeaders,
      payload: [ImageBody, FormBody],
      success: HttpApiSchema.WithHeaders(LosslessJsonBody(PhotoJson).pipe(HttpApiSchema.status(201)), {
        location: Schema.String
      }),
      error: [InvalidRequest, NotFound, TooManyPhotosConflict, ...IDEMPOTENT_CREATE_ERRORS]
    }).middleware(WriteScope).annotateMerge(OpenApi.annotations({
      identifier: "uploadPetPhoto",
      summary: "Add a photo of an animal",
      description: "The body is the image's bytes with its type (`image/jpeg`, `image/png`, `image/webp`), or a " +
        "`multipart/form-data` form with one part named `file`. The bytes must be the type they claim (415 " +
        "otherwise) and decode whole within the pixel limit (400 otherwise); a body over the byte limit is 413, " +
        `before it is read when its Content-Length says so. A pet has at most ${MAX_PHOTOS_PER_PET} photos ` +
        "(409 `too_many_photos`). The image is turned upright (EXIF orientation), stripped of all metadata (GPS " +
        "included), and kept with two WebP renditions. When the processing queue is full the answer is 503 with " +
        "`Retry-After`. Answers 201 with the photo and its `Location`. " + IDEMPOTENCY_DESCRIPTION
    })),
    HttpApiEndpoint.get("listPetPhotos", "/pets/:petId/photos", {
      params: { petId: PetIdParam },
      success: LosslessJsonBody(PhotosJson),
      error: READ_ERRORS
    }).annotateMerge(OpenApi.annotations({
      identifier: "listPetPhotos",
      summary: "List an animal's photos",
      description: "The pet's photos in upload order, each with fresh signed URLs. A retired pet's photos are " +
        "kept and listed while its orders are readable."
    })),
    HttpApiEndpoint.delete("deletePetPhoto", "/pets/:petId/photos/:photoId", {
      params: { petId: PetIdParam, photoId: PhotoIdParam },
      success: HttpApiSchema.NoContent,
      error: READ_ERRORS
    }).middleware(WriteScope).annotateMerge(OpenApi.annotations({
      identifier: "deletePetPhoto",
      summary: "Delete a photo",
      description: "Answers 204 and removes the photo's record and bytes; its URLs answer 404 from then on."
    }))
  )
  .middleware(Authorization)
  // After Authorization: a rendition takes a signed URL, or else a key.
  .add(
    HttpApiEndpoint.get("getPetPhotoRendition", "/pets/:petId/photos/:photoId/:rendition", {
      params: { petId: PetIdParam, photoId: PhotoIdParam, rendition: Rendition },
      query: {
        [EXPIRES_PARAM]: Schema.optionalKey(Schema.String.annotate({
          description: "When the signed URL expires (seconds since the epoch); set by the service."
        })),
        [SIGNATURE_PARAM]: Schema.optionalKey(Schema.String.annotate({
          description: "The URL's signature; set by the service."
        }))
      },
      headers: { "if-none-match": Schema.optionalKey(Schema.String) },
      success: [RenditionBody, HttpApiSchema.Empty(302), HttpApiSchema.Empty(304)],
      error: [...READ_ERRORS, Forbidden]
    }).middleware(PhotoUrlAuthorization).annotateMerge(OpenApi.annotations({
      identifier: "getPetPhotoRendition",
      summary: "Get a photo's image",
      description: "The rendition's bytes, with a strong `ETag` (its content hash) and 304 on a matching " +
        "`If-None-Match`, cached for a year (`immutable`: a rendition never changes). Needs the signed URL " +
        "of a photo record (`expires` and `signature`), or a key of any scope; a bad or expired signature is 403. " +
        "With the bytes in an object store (`PHOTO_STORE=s3`), a 302 to a presigned URL of the store instead."
    }))
  )
  .middleware(RequestValidation)
  .annotateMerge(OpenApi.annotations({ description: "Photos of the animals, processed and served by the store." }))
{}
