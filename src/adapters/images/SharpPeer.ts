/**
 * `sharp` (libvips), the photo processor's library: an optional peer dependency, so that
 * an embedder who uses only the domain and the memory store does not install it. Loaded
 * here, once, by the one module that needs it at run time: without it, the import fails
 * with a message naming the package to install.
 */
import type SharpModule from "sharp"
import { missingPeer } from "../process/MissingPeer.ts"

const isNotFound = (error: unknown): boolean =>
  typeof error === "object" && error !== null && "code" in error && error.code === "ERR_MODULE_NOT_FOUND"

export const sharp: typeof SharpModule = await import("sharp").then((module) => module.default).catch((error: unknown) => {
  throw isNotFound(error) ? missingPeer("animal-store photo processing", "sharp", error) : error
})
