import { Schema } from "effect"
import { PetId } from "../pets/PetId.ts"
import { ImageType } from "./ImageType.ts"
import { PhotoId } from "./PhotoId.ts"
import { RenditionFile } from "./Rendition.ts"

/** Most photos one pet may have. */
export const MAX_PHOTOS_PER_PET = 20

/**
 * The key under which a photo's bytes are stored (PhotoStore), chosen before the record
 * exists: the bytes are written first, so the key cannot be the record's id.
 */
export const StorageKey = Schema.String.check(Schema.isPattern(/^[A-Za-z0-9_-]{16,64}$/))

/** A photo before the store gives it an id: what processing an upload made of it. */
export class NewPhoto extends Schema.Class<NewPhoto>("NewPhoto")({
  petId: PetId,
  /** The original's type (the upload's, re-encoded). */
  contentType: ImageType,
  /** The original's size in pixels, upright. */
  width: Schema.Int.check(Schema.isGreaterThan(0)),
  height: Schema.Int.check(Schema.isGreaterThan(0)),
  /** The original's size in bytes. */
  bytes: Schema.Int.check(Schema.isGreaterThan(0)),
  storageKey: StorageKey,
  renditions: Schema.Struct({ original: RenditionFile, thumb: RenditionFile, medium: RenditionFile }),
  createdAt: Schema.DateTimeUtc
}) {}

/** A pet's photo as stored. */
export class Photo extends Schema.Class<Photo>("Photo")({
  id: PhotoId,
  ...NewPhoto.fields
}) {}
