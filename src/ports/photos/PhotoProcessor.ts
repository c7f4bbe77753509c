import { Context, type Effect } from "effect"
import type { ImageType } from "../../domain/photos/ImageType.ts"
import type { InvalidImage, ProcessingBusy } from "../../domain/photos/PhotoErrors.ts"
import type { Rendition } from "../../domain/photos/Rendition.ts"

/** What processing made of an upload: the original's type and upright size, and each rendition's bytes. */
export interface ProcessedPhoto {
  readonly contentType: ImageType
  readonly width: number
  readonly height: number
  readonly renditions: { readonly [R in Rendition]: { readonly contentType: ImageType; readonly data: Uint8Array } }
}

/**
 * Turns an upload into what is kept of it: decodes the whole image (refusing one over
 * the pixel limit before it is decoded), applies its orientation, strips all metadata
 * (EXIF, GPS, XMP, ICC comments), re-encodes the original in `type` and makes the scaled
 * renditions. Runs at a bounded concurrency: when every slot and queue place is taken it
 * fails ProcessingBusy at once rather than queue without bound.
 */
export class PhotoProcessor extends Context.Service<PhotoProcessor, {
  /** `bytes`, already sniffed as `type`. */
  readonly process: (bytes: Uint8Array, type: ImageType) => Effect.Effect<ProcessedPhoto, InvalidImage | ProcessingBusy>
}>()("animal-store/ports/PhotoProcessor") {}
