import { Effect, Layer, Semaphore } from "effect"
import { readdirSync, readFileSync } from "node:fs"
import { setPriority } from "node:os"
import type SharpModule from "sharp"
import type { Sharp } from "sharp"
import type { ImageType } from "../../domain/photos/ImageType.ts"
import { InvalidImage, ProcessingBusy } from "../../domain/photos/PhotoErrors.ts"
import { RENDITION_SIZE } from "../../domain/photos/Rendition.ts"
import { PhotoProcessor, type ProcessedPhoto } from "../../ports/photos/PhotoProcessor.ts"
import * as Spans from "../observability/Spans.ts"
import { DEFAULTS, type Options } from "./PhotoProcessorOptions.ts"
import { loadSharp, requireSharp } from "./SharpPeer.ts"

export { DEFAULTS, type Options }

// sharp's names of the types an upload may be.
const FORMAT_OF: Record<ImageType, string> = { "image/jpeg": "jpeg", "image/png": "png", "image/webp": "webp" }

// The original re-encoded in its own type; quality high enough that a second encode loses little.
// A JPEG without Huffman optimisation: with it, libjpeg keeps the whole image's coefficients
// for a second pass (36 MB for 12 megapixels) and took 4x the CPU (measured on a 3 MB,
// 4000x3000 JPEG: 510-650 ms against 120-160 ms), for a file 8% smaller.
const encodeOriginal = (pipeline: Sharp, type: ImageType): Sharp =>
  type === "image/jpeg"
    ? pipeline.jpeg({ quality: 90, optimiseCoding: false })
    : type === "image/png"
    ? pipeline.png()
    : pipeline.webp({ quality: 90 })

const fitIn = (size: number) => ({ width: size, height: size, fit: "inside", withoutEnlargement: true }) as const

// sharp's output as a plain Uint8Array over the same memory: no copy of a rendition's bytes.
const viewOf = (buffer: Buffer): Uint8Array => new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength)

/**
 * libvips decodes and encodes on its own threads ("libvips worker"), made as it needs them.
 * On Linux each is given nice 19 when first seen, so that the threads that answer the rest
 * of the API (the main thread, the database's) take the cores first whenever they want them:
 * a photo takes the CPU the API leaves. Elsewhere (no /proc) nothing changes.
 */
const lowered = new Set<string>()
const lowerWorkers = (): void => {
  let tasks: Array<string>
  try {
    tasks = readdirSync("/proc/self/task")
  } catch {
    return
  }
  for (const tid of tasks) {
    if (lowered.has(tid)) continue
    try {
      if (readFileSync(`/proc/self/task/${tid}/comm`, "latin1").startsWith("libvips")) {
        setPriority(Number(tid), 19)
        lowered.add(tid)
      }
    } catch {
      // A thread gone meanwhile, or a system that refuses: it runs at the process's priority.
    }
  }
}

// libvips' words are not for the client: a decode failure is named, not quoted.
const invalid = (type: ImageType) => new InvalidImage({ message: `the body does not decode as a whole ${type} image` })

const processNow = (
  sharp: typeof SharpModule,
  bytes: Uint8Array,
  type: ImageType,
  maxPixels: number
): Promise<ProcessedPhoto | InvalidImage> =>
  (async () => {
    // failOn "warning": a truncated or damaged image is refused, not half-decoded.
    const input = () => sharp(bytes, { failOn: "warning", limitInputPixels: maxPixels, sequentialRead: true })
    // The header alone, without the pixel limit, so a bomb is named as one.
    const metadata = await sharp(bytes, { limitInputPixels: false }).metadata()
    if (metadata.format !== FORMAT_OF[type]) {
      return new InvalidImage({ message: `the body is not a ${type} image past its first bytes` })
    }
    // A bomb declares huge dimensions in a few bytes: refused from its header, before any pixel is decoded.
    if (metadata.width * metadata.height > maxPixels) {
      return new InvalidImage({
        message: `the image is ${metadata.width}×${metadata.height} pixels, over the limit of ${maxPixels}`
      })
    }
    // autoOrient applies the EXIF orientation; sharp writes no metadata unless asked to, GPS and all.
    // One step after the other, each its own decode: the original streams the image through
    // in strips (no whole decoded image is held unless a rotation needs one); the medium is
    // decoded at a reduced scale (a JPEG's shrink-on-load: 1/2, 1/4, 1/8), its few pixels
    // kept raw, and the thumb is made from them rather than from a third decode.
    lowerWorkers()
    const original = await encodeOriginal(input().autoOrient(), type).toBuffer({ resolveWithObject: true })
    lowerWorkers()
    const pixels = await input().autoOrient().resize(fitIn(RENDITION_SIZE.medium)).raw().toBuffer({ resolveWithObject: true })
    const fromPixels = () =>
      sharp(pixels.data, { raw: { width: pixels.info.width, height: pixels.info.height, channels: pixels.info.channels } })
    const medium = await fromPixels().webp({ quality: 80 }).toBuffer()
    const thumb = await fromPixels().resize(fitIn(RENDITION_SIZE.thumb)).webp({ quality: 80 }).toBuffer()
    return {
      contentType: type,
      width: original.info.width,
      height: original.info.height,
      renditions: {
        original: { contentType: type, data: viewOf(original.data) },
        thumb: { contentType: "image/webp", data: viewOf(thumb) },
        medium: { contentType: "image/webp", data: viewOf(medium) }
      }
    } satisfies ProcessedPhoto
  })().catch(() => invalid(type))

/**
 * A PhotoProcessor on sharp. libvips decodes on libuv's thread pool, off the event loop;
 * a semaphore bounds how many uploads it works on at once, so an upload flood takes at
 * most `concurrency` of the pool's threads and leaves the rest of the API its CPU, and
 * a bounded number wait: past them the answer is ProcessingBusy, at once.
 */
export const make = (options: Options) =>
  Effect.gen(function*() {
    yield* Effect.sync(requireSharp)
    const slots = yield* Semaphore.make(options.concurrency)
    const capacity = options.concurrency + options.queue
    let admitted = 0
    const busy = new ProcessingBusy({ retryAfter: options.retryAfterSeconds })
    return PhotoProcessor.of({
      process: Spans.method("PhotoProcessor.process", (bytes: Uint8Array, type: ImageType) =>
        Effect.suspend((): Effect.Effect<ProcessedPhoto, InvalidImage | ProcessingBusy> => {
          if (admitted >= capacity) return Effect.fail(busy)
          admitted++
          return Semaphore.withPermit(slots)(
            Effect.flatMap(
              // A sharp that cannot load (a binding for another platform) is a defect, not the image's fault.
              Effect.promise(() => loadSharp().then((sharp) => processNow(sharp, bytes, type, options.maxPixels))),
              (result) => result instanceof InvalidImage ? Effect.fail(result) : Effect.succeed(result)
            )
          ).pipe(Effect.ensuring(Effect.sync(() => admitted--)))
        }))
    })
  })

/** A PhotoProcessor on sharp with `options`. */
export const layer = (options: Options = DEFAULTS): Layer.Layer<PhotoProcessor> =>
  Layer.effect(PhotoProcessor, make(options))
