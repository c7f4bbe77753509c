import { Effect, Exit, Fiber } from "effect"
import sharp from "sharp"
import { describe, expect, it } from "vitest"
import * as PhotoProcessorSharp from "../../../src/adapters/images/PhotoProcessorSharp.ts"
import { InvalidImage, ProcessingBusy } from "../../../src/domain/photos/PhotoErrors.ts"
import { jpeg, phoneJpeg, png, pngBomb, polyglotJpeg, POLYGLOT_PAYLOAD, webp } from "./TestImages.ts"

const processor = Effect.runSync(PhotoProcessorSharp.make(PhotoProcessorSharp.DEFAULTS))
const run = (bytes: Uint8Array, type: "image/jpeg" | "image/png" | "image/webp") =>
  Effect.runPromiseExit(processor.process(bytes, type))
const failure = async (bytes: Uint8Array, type: "image/jpeg" | "image/png" | "image/webp") => {
  const exit = await run(bytes, type)
  expect(Exit.isFailure(exit)).toBe(true)
  return Exit.isFailure(exit) ? exit.cause.reasons[0] : undefined
}

describe("PhotoProcessorSharp", () => {
  it("turns a phone photo upright and strips its metadata, GPS included", async () => {
    const exit = await run(await phoneJpeg(), "image/jpeg")
    if (!Exit.isSuccess(exit)) throw new Error(String(exit))
    const photo = exit.value
    // Stored 600×400 with orientation 6: shown 400×600.
    expect([photo.width, photo.height]).toEqual([400, 600])
    const original = await sharp(photo.renditions.original.data).metadata()
    expect(original.format).toBe("jpeg")
    expect([original.width, original.height]).toEqual([400, 600])
    expect(original.orientation).toBeUndefined()
    expect(original.exif).toBeUndefined()
    expect(original.xmp).toBeUndefined()
    const text = Buffer.from(photo.renditions.original.data).toString("latin1")
    for (const leak of ["PhoneMaker", "Phone 12", "Someone", "GPS", "Exif"]) expect(text).not.toContain(leak)
    // Rotated 90° clockwise: the red left half is now the top.
    const { data } = await sharp(photo.renditions.original.data).raw().toBuffer({ resolveWithObject: true })
    expect(data[0]).toBeGreaterThan(200)
    expect(data[2]).toBeLessThan(60)
  })

  it("makes WebP renditions that fit in 256 and 1024 pixels, never enlarged", async () => {
    const exit = await run(await webp(2000, 1500), "image/webp")
    if (!Exit.isSuccess(exit)) throw new Error(String(exit))
    const { medium, original, thumb } = exit.value.renditions
    expect(original.contentType).toBe("image/webp")
    const sizes = await Promise.all([thumb, medium].map(async (r) => {
      const m = await sharp(r.data).metadata()
      return [r.contentType, m.format, m.width, m.height]
    }))
    expect(sizes).toEqual([["image/webp", "webp", 256, 192], ["image/webp", "webp", 1024, 768]])
    const small = await run(await png(300, 200), "image/png")
    if (!Exit.isSuccess(small)) throw new Error(String(small))
    expect((await sharp(small.value.renditions.medium.data).metadata()).width).toBe(300)
    expect((await sharp(small.value.renditions.original.data).metadata()).format).toBe("png")
  })

  it("refuses a decompression bomb from its header, a truncated image, and a type that is not what was sniffed", async () => {
    const bomb = await failure(pngBomb(), "image/png")
    expect(bomb).toMatchObject({ _tag: "Fail", error: expect.any(InvalidImage) })
    expect(String((bomb as { error: InvalidImage }).error.message)).toContain("over the limit of 40000000")
    const whole = await jpeg(400, 300)
    expect(await failure(whole.subarray(0, Math.floor(whole.length / 2)), "image/jpeg"))
      .toMatchObject({ error: expect.any(InvalidImage) })
    expect(await failure(await png(), "image/jpeg")).toMatchObject({ error: expect.any(InvalidImage) })
  })

  it("keeps nothing of what follows a polyglot's image", async () => {
    const exit = await run(await polyglotJpeg(), "image/jpeg")
    if (!Exit.isSuccess(exit)) throw new Error(String(exit))
    for (const rendition of Object.values(exit.value.renditions)) {
      expect(Buffer.from(rendition.data).toString("latin1")).not.toContain("<script")
    }
    expect(POLYGLOT_PAYLOAD).toContain("<script")
  })

  it("refuses at once, ProcessingBusy, when every slot and queue place is taken", async () => {
    const tiny = Effect.runSync(PhotoProcessorSharp.make({ ...PhotoProcessorSharp.DEFAULTS, concurrency: 1, queue: 1 }))
    const big = await jpeg(3000, 3000)
    const result = await Effect.runPromise(Effect.gen(function*() {
      const first = yield* Effect.forkChild(tiny.process(big, "image/jpeg"))
      const second = yield* Effect.forkChild(tiny.process(big, "image/jpeg"))
      yield* Effect.yieldNow
      const third = yield* Effect.exit(tiny.process(big, "image/jpeg"))
      const done = yield* Effect.all([Fiber.await(first), Fiber.await(second)])
      // Once they are done, there is room again.
      const fourth = yield* Effect.exit(tiny.process(big, "image/jpeg"))
      return { third, done, fourth }
    }))
    expect(result.third).toEqual(Exit.fail(new ProcessingBusy({ retryAfter: 2 })))
    expect(result.done.every(Exit.isSuccess)).toBe(true)
    expect(Exit.isSuccess(result.fourth)).toBe(true)
  }, 60_000)
})

