import { Clock, DateTime, Effect } from "effect"
import { createHash, randomBytes } from "node:crypto"
import type { PetNotFound, StoreUnavailable } from "../../domain/Errors.ts"
import type { PetId } from "../../domain/pets/PetId.ts"
import { type ImageType, sniffImageType } from "../../domain/photos/ImageType.ts"
import { MAX_PHOTOS_PER_PET, NewPhoto, type Photo } from "../../domain/photos/Photo.ts"
import {
  type InvalidImage,
  type ProcessingBusy,
  TooManyPhotos,
  UnsupportedImage
} from "../../domain/photos/PhotoErrors.ts"
import { blobKey, Rendition, type RenditionFile } from "../../domain/photos/Rendition.ts"
import { PhotoProcessor } from "../../ports/photos/PhotoProcessor.ts"
import { PhotoRepository } from "../../ports/photos/PhotoRepository.ts"
import { PhotoStore } from "../../ports/photos/PhotoStore.ts"

/** An upload as it arrived: the pet, the bytes and the type the client said they are (none: not said). */
export interface Upload {
  readonly petId: PetId
  readonly bytes: Uint8Array
  readonly declared: string | undefined
}

export type UploadError = UnsupportedImage | InvalidImage | ProcessingBusy | PetNotFound | TooManyPhotos | StoreUnavailable

// A declared type that says nothing of the bytes (a form's file of unknown type).
const UNDECLARED = new Set(["application/octet-stream"])

const hashOf = (data: Uint8Array): string => createHash("sha256").update(data).digest("base64url")

/**
 * The one upload path (a raw image body and a multipart form's `file` alike): the bytes
 * must be the type they claim by their magic bytes, then decode whole (PhotoProcessor);
 * the renditions' bytes are written first and the record second, so a failure in
 * between leaves only bytes without a record, which the orphan sweep (PhotoSweep) removes.
 * A pet at its limit is refused before the costly decode, and again, atomically, when
 * the record is written.
 */
export const make = Effect.gen(function*() {
  const repository = yield* PhotoRepository
  const store = yield* PhotoStore
  const processor = yield* PhotoProcessor

  return (upload: Upload): Effect.Effect<Photo, UploadError> =>
    Effect.gen(function*() {
      const sniffed = sniffImageType(upload.bytes)
      if (sniffed === undefined) {
        return yield* new UnsupportedImage({
          message: upload.bytes.length === 0
            ? "the body is empty; send a JPEG, PNG or WebP image"
            : "the body is not a JPEG, PNG or WebP image"
        })
      }
      const declared = upload.declared?.split(";", 1)[0]!.trim().toLowerCase()
      if (declared !== undefined && declared !== "" && !UNDECLARED.has(declared) && declared !== sniffed) {
        return yield* new UnsupportedImage({ message: `the body is ${sniffed}, not ${declared} as its content-type says` })
      }
      if ((yield* repository.list(upload.petId)).length >= MAX_PHOTOS_PER_PET) {
        return yield* new TooManyPhotos({ petId: upload.petId, limit: MAX_PHOTOS_PER_PET })
      }
      const processed = yield* processor.process(upload.bytes, sniffed)
      const storageKey = randomBytes(18).toString("base64url")
      const files = {} as Record<Rendition, RenditionFile>
      for (const rendition of Rendition.literals) {
        const { contentType, data } = processed.renditions[rendition]
        yield* store.put(blobKey(storageKey, rendition), data)
        files[rendition] = { contentType: contentType as ImageType, bytes: data.length, hash: hashOf(data) }
      }
      const createdAt = DateTime.makeUnsafe(yield* Clock.currentTimeMillis)
      return yield* repository.add(
        new NewPhoto({
          petId: upload.petId,
          contentType: processed.contentType,
          width: processed.width,
          height: processed.height,
          bytes: files.original.bytes,
          storageKey,
          renditions: files,
          createdAt
        }, { disableChecks: true })
      ).pipe(
        // Refused (the limit reached meanwhile, the pet retired): its bytes go now rather than at the sweep.
        Effect.tapError(() =>
          store.delete(Rendition.literals.map((rendition) => blobKey(storageKey, rendition))).pipe(Effect.ignore)
        )
      )
    })
})

/** What `make` gives: the upload of one photo. */
export type Uploader = Effect.Success<typeof make>
