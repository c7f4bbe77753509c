/**
 * Fuzzing of photo uploads: valid JPEG, PNG and WebP images (a phone's JPEG with EXIF
 * among them) mutated at random (cut short, bytes flipped, a run overwritten, two images
 * spliced, a declared size inflated) and posted under a type that is theirs or another's,
 * to the real router over the memory store with sharp.
 *
 * Whatever the bytes, the answer must be a 201 with a photo whose renditions decode as the
 * images they claim to be and carry no metadata, or the documented Error body with its
 * status (never a 5xx: nothing else runs, so the queue is never full); and the pet's
 * photos change only by the one a 201 adds.
 *
 * Each run uses a new random seed; a failure names it, and `FUZZ_SEED=<seed>` replays it.
 */
import { randomInt } from "node:crypto"
import { Duration, Layer, Redacted } from "effect"
import sharp from "sharp"
import { describe, expect, it, onTestFinished } from "vitest"
import * as ApiKeysCached from "../../../src/adapters/apikeys/ApiKeysCached.ts"
import { ERROR_STATUS, type ErrorCode } from "../../../src/adapters/http/api/ApiErrors.ts"
import * as ApiKeyStoreMemory from "../../../src/adapters/memory/keys/ApiKeyStoreMemory.ts"
import * as StoreMemory from "../../../src/adapters/memory/StoreMemory.ts"
import { jpeg, phoneJpeg, png, webp } from "../images/TestImages.ts"
import { API_KEY, AUTH, createPet, makeTestServer, SERVERS } from "./TestServer.ts"
import { mulberry32 } from "../../e2e/Mulberry32.ts"

const SEED = (() => {
  const fromEnv = process.env["FUZZ_SEED"]
  if (fromEnv === undefined || fromEnv === "") return randomInt(2 ** 31)
  if (!/^\d+$/.test(fromEnv)) throw new Error(`FUZZ_SEED must be a non-negative integer, got ${JSON.stringify(fromEnv)}`)
  return Number(fromEnv)
})()

const CASES = 120
const TYPES = ["image/jpeg", "image/png", "image/webp"] as const
const FORMAT_OF: Record<string, string> = { "image/jpeg": "jpeg", "image/png": "png", "image/webp": "webp" }


type Random = () => number
const below = (random: Random, n: number) => Math.floor(random() * n)

/** One mutation of `image` (`other` for a splice), and what it did, for the failure's message. */
const mutate = (random: Random, image: Uint8Array, other: Uint8Array): { readonly bytes: Uint8Array; readonly did: string } => {
  const bytes = new Uint8Array(image)
  switch (below(random, 6)) {
    case 0: {
      const at = below(random, bytes.length)
      return { bytes: bytes.subarray(0, at), did: `cut at ${at}` }
    }
    case 1: {
      const flips: Array<number> = []
      for (let i = 0; i < 1 + below(random, 8); i++) {
        const at = below(random, bytes.length)
        bytes[at] = bytes[at]! ^ (1 << below(random, 8))
        flips.push(at)
      }
      return { bytes, did: `bits flipped at ${flips.join(",")}` }
    }
    case 2: {
      const at = below(random, bytes.length)
      const length = Math.min(bytes.length - at, 1 + below(random, 64))
      for (let i = at; i < at + length; i++) bytes[i] = below(random, 256)
      return { bytes, did: `${length} bytes overwritten at ${at}` }
    }
    case 3: {
      const at = below(random, bytes.length)
      const from = below(random, other.length)
      return { bytes: new Uint8Array([...bytes.subarray(0, at), ...other.subarray(from)]), did: `spliced at ${at} with another from ${from}` }
    }
    case 4: {
      // A size field inflated: the first 0x00 0x?? pair in the header becomes 0xff 0xff.
      const at = bytes.subarray(0, 64).findIndex((byte, i) => i > 8 && byte === 0 && (bytes[i + 1] ?? 0) > 0)
      if (at !== -1) bytes.set([0xff, 0xff], at)
      return { bytes, did: `a header size inflated at ${at}` }
    }
    default:
      return { bytes, did: "unchanged" }
  }
}

const keys = ApiKeysCached.layer([Redacted.make(API_KEY)]).pipe(Layer.provide(ApiKeyStoreMemory.layer))

describe("photo upload fuzzing", () => {
  it(`${CASES} mutated images: a 201 with clean renditions or the documented Error body, and nothing else stored (seed ${SEED})`, async () => {
    const api = makeTestServer(
      StoreMemory.layer,
      { photos: { maxBytes: 10 * 1024 * 1024, urls: { ttl: Duration.hours(1), secrets: [] } } },
      keys,
      SERVERS
    )
    onTestFinished(() => api.dispose())
    const random = mulberry32(SEED)
    const images: ReadonlyArray<readonly [string, Uint8Array]> = [
      ["image/jpeg", new Uint8Array(await jpeg(64, 48))],
      ["image/jpeg", new Uint8Array(await phoneJpeg())],
      ["image/png", new Uint8Array(await png(64, 48))],
      ["image/webp", new Uint8Array(await webp(64, 48))]
    ]
    let pet = await createPet(api, { name: "Fuzzed", categoryId: 1 })
    let photos = 0
    const outcomes: Record<string, number> = {}
    for (let i = 0; i < CASES; i++) {
      const [type, image] = images[below(random, images.length)]!
      const mutation = mutate(random, image, images[below(random, images.length)]![1])
      const claimed = random() < 0.8 ? type : TYPES[below(random, TYPES.length)]!
      const context = `seed ${SEED}, case ${i}: a ${type} ${mutation.did}, sent as ${claimed}`
      // A pet holds at most 20 photos: the next cases go to a new one.
      if (photos === 20) {
        pet = await createPet(api, { name: "Fuzzed", categoryId: 1 })
        photos = 0
      }
      const before = (await api.call("GET", `/v1/pets/${pet.id}/photos`, { headers: AUTH })).json as ReadonlyArray<unknown>
      const answer = await api.call("POST", `/v1/pets/${pet.id}/photos`, {
        body: mutation.bytes,
        headers: { ...AUTH, "content-type": claimed }
      })
      const after = (await api.call("GET", `/v1/pets/${pet.id}/photos`, { headers: AUTH })).json as ReadonlyArray<unknown>
      outcomes[answer.status] = (outcomes[answer.status] ?? 0) + 1
      expect(answer.status, `${context}: ${answer.text}`).toBeLessThan(500)
      if (answer.status === 201) {
        photos++
        expect(after, context).toHaveLength(before.length + 1)
        const photo = answer.json as { readonly contentType: string; readonly urls: Record<string, string> }
        expect(photo.contentType, context).toBe(claimed)
        for (const [rendition, url] of Object.entries(photo.urls)) {
          const served = await api.call("GET", url)
          expect(served.status, `${context}: ${rendition}`).toBe(200)
          const metadata = await sharp(served.bytes).metadata()
          expect(metadata.format, `${context}: ${rendition}`).toBe(rendition === "original" ? FORMAT_OF[claimed] : "webp")
          expect(metadata.exif, `${context}: ${rendition} keeps EXIF`).toBeUndefined()
        }
      } else {
        const body = answer.json as { readonly code: ErrorCode; readonly message: string; readonly status: number }
        expect(Object.keys(body).sort(), `${context}: ${answer.text}`).toEqual(["code", "message", "status"])
        expect(ERROR_STATUS[body.code], `${context}: ${answer.text}`).toBe(answer.status)
        expect(body.status, context).toBe(answer.status)
        expect(body.message, context).not.toMatch(/vips|sharp|at \w+ \(|node_modules/i)
        expect(after, context).toEqual(before)
      }
    }
    // The mutations reach both sides: some images survive, most are refused.
    expect(outcomes["201"] ?? 0, JSON.stringify(outcomes)).toBeGreaterThan(0)
    expect(CASES - (outcomes["201"] ?? 0), JSON.stringify(outcomes)).toBeGreaterThan(0)
  }, 120_000)
})
