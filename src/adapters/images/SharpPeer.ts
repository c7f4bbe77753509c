/**
 * `sharp` (libvips), the photo processor's library: an optional peer dependency, so that
 * an embedder who uses only the domain and the memory store does not install it.
 *
 * Found when the processor is made, so a service without it stops at start naming the
 * package to install; loaded on the first photo, once: libvips and its libraries take about
 * 27 MB resident, which an instance that takes no upload does not pay.
 */
import type SharpModule from "sharp"
import { missingPeer } from "../process/MissingPeer.ts"

const ENTRY = "animal-store photo processing"

const isNotFound = (error: unknown): boolean =>
  typeof error === "object" && error !== null && "code" in error && error.code === "ERR_MODULE_NOT_FOUND"

/** Throws the missing peer's error when sharp is not installed; resolves the package without loading it. */
export const requireSharp = (): void => {
  try {
    import.meta.resolve("sharp")
  } catch (error) {
    throw isNotFound(error) ? missingPeer(ENTRY, "sharp", error) : error
  }
}

let loaded: Promise<typeof SharpModule> | undefined

/**
 * sharp, loaded on the first call. One libvips thread per image, and no operation cache:
 * the processor's semaphore alone sets the CPU photos take, and decoded images are not kept
 * after their upload.
 */
export const loadSharp = (): Promise<typeof SharpModule> =>
  loaded ??= import("sharp").then(({ default: sharp }) => {
    sharp.concurrency(1)
    sharp.cache(false)
    return sharp
  }, (error: unknown) => {
    loaded = undefined
    throw isNotFound(error) ? missingPeer(ENTRY, "sharp", error) : error
  })
