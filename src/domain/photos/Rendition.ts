import { Schema } from "effect"
import { ImageType } from "./ImageType.ts"

/**
 * What is kept of a photo: `original`, the upload decoded, turned upright and stripped of
 * its metadata, in its own type; `thumb` and `medium`, WebP copies that fit in a square of
 * {@link RENDITION_SIZE} pixels (never enlarged).
 */
export const Rendition = Schema.Literals(["original", "thumb", "medium"])
/** A value of {@link Rendition}. */
export type Rendition = typeof Rendition.Type

/** The longest side of each scaled rendition, in pixels. */
export const RENDITION_SIZE = { thumb: 256, medium: 1024 } as const satisfies Record<Exclude<Rendition, "original">, number>

/**
 * One stored rendition: its type, its size in bytes and `hash`, the SHA-256 of its bytes
 * (base64url), which is its strong ETag: a rendition never changes once written.
 */
export const RenditionFile = Schema.Struct({
  contentType: ImageType,
  bytes: Schema.Int.check(Schema.isGreaterThan(0)),
  hash: Schema.String.check(Schema.isPattern(/^[A-Za-z0-9_-]{43}$/))
})
/** A value of {@link RenditionFile}. */
export type RenditionFile = typeof RenditionFile.Type

/** Where a rendition's bytes are kept: the photo's storage key and the rendition's name. */
export const blobKey = (storageKey: string, rendition: Rendition): string => `${storageKey}/${rendition}`

/** The storage key of a blob key (see {@link blobKey}). */
export const storageKeyOf = (key: string): string => key.slice(0, key.lastIndexOf("/"))
