/** The `photos` operations: uploads, lists, removals, and the renditions' bytes. */
import { Clock, Duration, Effect, Option, Schema, Stream } from "effect"
import { createHash } from "node:crypto"
import { Multipart } from "effect/http"
import { InvalidInput } from "../../../../domain/Errors.ts"
import type { Photo } from "../../../../domain/photos/Photo.ts"
import { PhotoNotFound } from "../../../../domain/photos/PhotoErrors.ts"
import { blobKey, Rendition } from "../../../../domain/photos/Rendition.ts"
import * as PhotoRemovals from "../../../../application/photos/PhotoRemovals.ts"
import * as PhotoUploads from "../../../../application/photos/PhotoUploads.ts"
import { PhotoRepository } from "../../../../ports/photos/PhotoRepository.ts"
import { PhotoStore } from "../../../../ports/photos/PhotoStore.ts"
import { Api } from "../../api/Api.ts"
import { MULTIPART_FORM, PhotoJson } from "../../api/PhotosApi.ts"
import type { Handlers, RawBody } from "../routing/ApiRouter.ts"
import { pathOf } from "../routing/EndpointPath.ts"
import * as Reply from "../routing/Reply.ts"
import { PhotoUrls } from "./PhotoUrls.ts"

const { getPetPhotoRendition } = Api.groups.photos.endpoints
const renditionPath = pathOf<"petId" | "photoId" | "rendition">(getPetPhotoRendition)
const encodePhoto = Schema.encodeSync(PhotoJson)

/** A rendition never changes once written: caches may keep it for good. */
const IMMUTABLE = "public, max-age=31536000, immutable"
/** Bytes served as what they are, never run as a page: a polyglot stays an image. */
const IMAGE_HEADERS = {
  "cache-control": IMMUTABLE,
  "x-content-type-options": "nosniff",
  "content-security-policy": "default-src 'none'"
} as const

/**
 * A redirect's presigned URL is valid for 5 minutes; a browser may follow the same
 * redirect for 4 of them, so that it reuses the URL, and the bytes it cached under it.
 */
const REDIRECT_TTL = Duration.minutes(5)
const REDIRECT_CACHE = "private, max-age=240"

const FORM_FILE = "file"
const badForm = new InvalidInput({ message: `body: a multipart form must have exactly one part, a file named "${FORM_FILE}"` })

interface FormPart {
  readonly key: string
  readonly declared: string | undefined
  readonly bytes: Uint8Array | undefined
}

// The image of an upload: the body itself, or the one `file` part of a form (its type the part's).
const imageOf = (body: RawBody) => {
  if (!body.contentType.toLowerCase().startsWith(MULTIPART_FORM)) {
    return Effect.succeed({ bytes: body.bytes, declared: body.contentType })
  }
  return Stream.make(body.bytes).pipe(
    Stream.pipeThroughChannel(Multipart.makeChannel({ "content-type": body.contentType })),
    Stream.mapEffect((part): Effect.Effect<FormPart, Multipart.MultipartError> =>
      Multipart.isFile(part)
        ? Effect.map(part.contentEffect, (bytes) => ({ key: part.key, declared: part.contentType, bytes }))
        : Effect.succeed({ key: part.key, declared: undefined, bytes: undefined })
    ),
    Stream.runCollect,
    Effect.mapError(() => new InvalidInput({ message: "body: the multipart form is malformed" })),
    Effect.flatMap((parts) => {
      const [part, ...others] = parts
      return part === undefined || others.length > 0 || part.key !== FORM_FILE || part.bytes === undefined
        ? Effect.fail(badForm)
        : Effect.succeed({ bytes: part.bytes, declared: part.declared })
    })
  )
}

const BOUNDARY = /;\s*boundary="?([^";]+)"?/i

/**
 * What an Idempotency-Key is bound to: the body's type and a hash of its bytes, a form's
 * boundary left out (a client draws a new one for each sending of the same form).
 */
const uploadIdentity = (body: RawBody): string => {
  const type = body.contentType.split(";", 1)[0]!.trim().toLowerCase()
  const boundary = type === MULTIPART_FORM ? BOUNDARY.exec(body.contentType)?.[1] : undefined
  const bytes = boundary === undefined
    ? body.bytes
    // latin1 maps each byte to one character and back, so only the boundary changes.
    : Buffer.from(Buffer.from(body.bytes).toString("latin1").split(`--${boundary}`).join("--"), "latin1")
  return `${type}\n${createHash("sha256").update(bytes).digest("base64url")}`
}

// "a", W/"a", * — If-None-Match compares weakly (RFC 9110, 13.1.2).
const matches = (ifNoneMatch: string | undefined, etag: string): boolean =>
  ifNoneMatch !== undefined &&
  ifNoneMatch.split(",").some((tag) => {
    const trimmed = tag.trim()
    return trimmed === "*" || trimmed.replace(/^W\//, "") === etag
  })

/** The handlers over the photo ports (PhotoRepository, PhotoStore, PhotoProcessor) and the URL signer in context. */
export const make = Effect.gen(function*() {
  const photos = yield* PhotoRepository
  const store = yield* PhotoStore
  const urls = yield* PhotoUrls
  const uploads = yield* PhotoUploads.make
  const remove = yield* PhotoRemovals.make

  const photoJson = (photo: Photo, now: number) => {
    const url = (rendition: Rendition) => urls.sign(renditionPath({ petId: photo.petId, photoId: photo.id, rendition }), now)
    return encodePhoto({
      id: photo.id,
      petId: photo.petId,
      contentType: photo.contentType,
      width: photo.width,
      height: photo.height,
      bytes: photo.bytes,
      createdAt: photo.createdAt,
      urls: { original: url("original"), thumb: url("thumb"), medium: url("medium") }
    })
  }

  return {
    uploadPetPhoto: {
      identity: ({ params, payload }) => `${params.petId}\n${uploadIdentity(payload)}`,
      // The checks and the decode store nothing: their refusals (a busy queue's 503 among them) are kept for no key.
      prepare: ({ params, payload }) =>
        Effect.flatMap(imageOf(payload), ({ bytes, declared }) =>
          Effect.map(uploads.prepare({ petId: params.petId, bytes, declared }), (prepared) =>
            Effect.gen(function*() {
              const photo = yield* uploads.save(prepared)
              const now = yield* Clock.currentTimeMillis
              return Reply.created(
                JSON.stringify(photoJson(photo, now)),
                renditionPath({ petId: photo.petId, photoId: photo.id, rendition: "original" })
              )
            })))
    },
    listPetPhotos: ({ params }) =>
      Effect.flatMap(photos.list(params.petId), (all) =>
        Effect.map(Clock.currentTimeMillis, (now) => Reply.ok(JSON.stringify(all.map((photo) => photoJson(photo, now)))))),
    deletePetPhoto: ({ params }) => Effect.as(remove(params.petId, params.photoId), Reply.noContent),
    getPetPhotoRendition: ({ headers, params }) =>
      Effect.gen(function*() {
        const photo = yield* photos.get(params.petId, params.photoId)
        const file = photo.renditions[params.rendition]
        const etag = `"${file.hash}"`
        if (matches(headers["if-none-match"], etag)) {
          return { status: 304, body: "", headers: { etag, ...IMAGE_HEADERS } } satisfies Reply.Reply
        }
        const key = blobKey(photo.storageKey, params.rendition)
        // A store that serves bytes itself (an object store): the client gets them there.
        if (store.redirectUrl !== undefined) {
          const location = yield* store.redirectUrl(key, REDIRECT_TTL)
          return { status: 302, body: "", headers: { location, "cache-control": REDIRECT_CACHE } } satisfies Reply.Reply
        }
        const bytes = yield* store.get(key)
        // A record without its bytes is a store that lost them: nothing to serve.
        if (Option.isNone(bytes)) return yield* new PhotoNotFound({ petId: params.petId, id: params.photoId })
        return {
          status: 200,
          body: "",
          bytes: bytes.value,
          contentType: file.contentType,
          headers: { etag, ...IMAGE_HEADERS }
        } satisfies Reply.Reply
      })
  } satisfies Pick<Handlers<never>, "uploadPetPhoto" | "listPetPhotos" | "deletePetPhoto" | "getPetPhotoRendition">
})
