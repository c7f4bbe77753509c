/** Image processing for pets' photos: the PhotoProcessor on sharp (an optional peer dependency). */
export * as PhotoProcessorSharp from "./PhotoProcessorSharp.ts"
