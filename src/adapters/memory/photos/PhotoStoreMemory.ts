import { Clock, DateTime, Effect, Layer, Option } from "effect"
import { PhotoStore } from "../../../ports/photos/PhotoStore.ts"
import * as Spans from "../../observability/Spans.ts"

/** Photos' bytes in process memory, each with when it was written (for the orphan sweep). */
export const make = Effect.sync(() => {
  // Insertion order is write order: the oldest keys come first.
  const blobs = new Map<string, { readonly bytes: Uint8Array; readonly writtenAt: number }>()
  return PhotoStore.of({
    put: Spans.method("PhotoStore.put", (key: string, bytes: Uint8Array) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.sync(() => {
          // Copied: the caller's buffer may be reused.
          if (!blobs.has(key)) blobs.set(key, { bytes: bytes.slice(), writtenAt: now })
        }))),
    get: Spans.method("PhotoStore.get", (key: string) => Effect.sync(() => Option.fromNullishOr(blobs.get(key)?.bytes))),
    delete: Spans.method("PhotoStore.delete", (keys: ReadonlyArray<string>) =>
      Effect.sync(() => {
        for (const key of keys) blobs.delete(key)
      })),
    olderThan: Spans.method("PhotoStore.olderThan", (before: DateTime.Utc, limit: number) =>
      Effect.sync(() => {
        const cutoff = DateTime.toEpochMillis(before)
        const keys: Array<string> = []
        for (const [key, blob] of blobs) {
          if (keys.length >= limit || blob.writtenAt >= cutoff) break
          keys.push(key)
        }
        return keys
      }))
  })
})

/** A PhotoStore of its own, in memory: nothing survives a restart. */
export const layer: Layer.Layer<PhotoStore> = Layer.effect(PhotoStore, make)
