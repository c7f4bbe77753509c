import { Schema } from "effect"

/** The image types an upload may be: what browsers show everywhere and libvips decodes safely. */
export const ImageType = Schema.Literals(["image/jpeg", "image/png", "image/webp"])
/** A value of {@link ImageType}. */
export type ImageType = typeof ImageType.Type

const startsWith = (bytes: Uint8Array, offset: number, signature: ReadonlyArray<number>): boolean =>
  bytes.length >= offset + signature.length && signature.every((byte, i) => bytes[offset + i] === byte)

// "RIFF" <size> "WEBP"
const RIFF = [0x52, 0x49, 0x46, 0x46]
const WEBP = [0x57, 0x45, 0x42, 0x50]

/**
 * The image type `bytes` are, by their magic bytes (the signature each format begins
 * with), or undefined when they begin as none of {@link ImageType}. A first check only:
 * a file can begin as an image and be something else past its signature, so a full decode
 * (PhotoProcessor) decides.
 */
export const sniffImageType = (bytes: Uint8Array): ImageType | undefined =>
  startsWith(bytes, 0, [0xff, 0xd8, 0xff])
    ? "image/jpeg"
    : startsWith(bytes, 0, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
    ? "image/png"
    : startsWith(bytes, 0, RIFF) && startsWith(bytes, 8, WEBP)
    ? "image/webp"
    : undefined
