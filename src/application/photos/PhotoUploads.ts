import { Clock, DateTime, Effect, Option } from "effect"
import { createHash, randomBytes } from "node:crypto"
import type { PetNotFound, StoreUnavailable } from "../../domain/Errors.ts"
import type { PetId } from "../../domain/pets/PetId.ts"
import { type ImageType, sniffImageType } from "../../domain/photos/ImageType.ts"
import { MAX_PHOTOS_PER_PET, NewPhoto, type Photo } from "../../domain/photos/Photo.ts"
import {
  type InvalidImage,
  type ProcessingBusy,
  ProcessingUnavailable,
  TooManyPhotos,
  UnsupportedImage
} from "../../domain/photos/PhotoErrors.ts"
import { blobKey, Rendition, type RenditionFile } from "../../domain/photos/Rendition.ts"
import { PhotoProcessor, type ProcessedPhoto } from "../../ports/photos/PhotoProcessor.ts"
import { PhotoRepository } from "../../ports/photos/PhotoRepository.ts"
import { PhotoStore } from "../../ports/photos/PhotoStore.ts"

/** An upload as it arrived: the pet, the bytes and the type the client said they are (none: not said). */
export interface Upload {
  readonly petId: PetId
  readonly bytes: Uint8Array
  readonly declared: string | undefined
}

export type UploadError =
  | UnsupportedImage
  | InvalidImage
  | ProcessingBusy
  | ProcessingUnavailable
  | PetNotFound
  | TooManyPhotos
  | StoreUnavailable

// A declared type that says nothing of the bytes (a form's file of unknown type).
const UNDECLARED = new Set(["application/octet-stream"])

const hashOf = (data: Uint8Array): string => createHash("sha256").update(data).digest("base64url")

/**
 * The one upload path (a raw image body and a multipart form's `file` alike), in two
 * steps: `prepare` checks and processes, `save` stores. The bytes
 * must be the type they claim by their magic bytes, then decode whole (PhotoProcessor);
 * the renditions' bytes are written first and the record second, so a failure in
 * between leaves only bytes without a record, which the orphan sweep (PhotoSweep) removes.
 * A pet at its limit is refused before the costly decode, and again, atomically, when
 * the record is written.
 */
export const make = Effect.gen(function*() {
  const repository = yield* PhotoRepository
  const store = yield* PhotoStore
  // Optional: a host without sharp still lists, serves and removes photos; it only takes no upload.
  const processor = yield* Effect.serviceOption(PhotoProcessor)

  // The checks and the decode: they store nothing, so their refusals are not kept for an Idempotency-Key.
  const prepare = (upload: Upload): Effect.Effect<Prepared, UploadError> =>
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
      if (Option.isNone(processor)) return yield* new ProcessingUnavailable()
      return { petId: upload.petId, processed: yield* processor.value.process(upload.bytes, sniffed) }
    })

  // Bytes first, record second.
  const save = (prepared: Prepared): Effect.Effect<Photo, PetNotFound | TooManyPhotos | StoreUnavailable> =>
    Effect.gen(function*() {
      const { petId, processed } = prepared
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
          petId,
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

  return { prepare, save, upload: (upload: Upload) => Effect.flatMap(prepare(upload), save) }
})

/** An upload checked and processed, ready to be stored. */
export interface Prepared {
  readonly petId: PetId
  readonly processed: ProcessedPhoto
}

/** What `make` gives: the checks and processing of an upload, its storing, and both in turn. */
export type Uploads = Effect.Success<typeof make>
