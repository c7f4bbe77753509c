/**
 * Photos through the real router over the memory store, with sharp processing: uploads
 * (raw and multipart, one path), the hostile bodies a public upload meets, the limits,
 * signed URLs, caching, idempotency, and a retired pet's photos.
 */
import { Clock, Context, DateTime, Duration, Effect, Layer, Redacted } from "effect"
import sharp from "sharp"
import { describe, expect, it } from "vitest"
import * as ApiKeysCached from "../../../src/adapters/apikeys/ApiKeysCached.ts"
import * as PhotoProcessorSharp from "../../../src/adapters/images/PhotoProcessorSharp.ts"
import * as ApiKeyStoreMemory from "../../../src/adapters/memory/keys/ApiKeyStoreMemory.ts"
import { issue } from "../../../src/application/keys/KeyIssuer.ts"
import { KeyName } from "../../../src/domain/keys/KeyName.ts"
import { MAX_PHOTOS_PER_PET } from "../../../src/domain/photos/Photo.ts"
import { ApiKeyStore } from "../../../src/ports/keys/ApiKeyStore.ts"
import { jpeg, phoneJpeg, png, pngBomb, pngMagicThenHtml, polyglotJpeg, webp } from "../images/TestImages.ts"
import { API_KEY, AUTH, createPet, expectError, makeTestServer, SERVERS, type TestServer } from "./TestServer.ts"
import * as StoreMemory from "../../../src/adapters/memory/StoreMemory.ts"
import { onTestFinished } from "vitest"

interface PhotoBody {
  readonly id: number
  readonly petId: number
  readonly contentType: string
  readonly width: number
  readonly height: number
  readonly bytes: number
  readonly createdAt: string
  readonly urls: { readonly original: string; readonly thumb: string; readonly medium: string }
}

const reader = issue({ name: KeyName.make("reader"), scope: "read", lifetime: undefined }, DateTime.makeUnsafe(Date.now()))
const keys = ApiKeysCached.layer([Redacted.make(API_KEY)]).pipe(
  Layer.provide(Layer.effect(ApiKeyStore, Effect.tap(ApiKeyStoreMemory.make, (store) => store.insert(reader.record))))
)
const READ = { authorization: `Bearer ${Redacted.value(reader.key)}` }

const server = (options?: { readonly maxBytes?: number; readonly processing?: PhotoProcessorSharp.Options }) => {
  const made = makeTestServer(
    StoreMemory.layer,
    { photos: { maxBytes: options?.maxBytes ?? 10 * 1024 * 1024, urls: { ttl: Duration.hours(1), secrets: [] } } },
    keys,
    SERVERS,
    options?.processing
  )
  onTestFinished(() => made.dispose())
  return made
}
const upload = (api: TestServer, petId: number, body: Uint8Array, contentType = "image/jpeg", headers = {}) =>
  api.call("POST", `/v1/pets/${petId}/photos`, { body, headers: { ...AUTH, "content-type": contentType, ...headers } })
const uploaded = async (api: TestServer, petId: number, body: Uint8Array, contentType = "image/jpeg") => {
  const result = await upload(api, petId, body, contentType)
  expect({ status: result.status, body: result.text }).toMatchObject({ status: 201 })
  return result.json as PhotoBody
}
const form = (
  parts: ReadonlyArray<{ name: string; filename?: string; type?: string; body: Uint8Array | string }>,
  boundary = "----animal-store-test-boundary"
) => {
  const chunks: Array<Buffer> = []
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"${part.filename === undefined ? "" : `; filename="${part.filename}"`}`
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n` +
      (part.type === undefined ? "" : `Content-Type: ${part.type}\r\n`) + "\r\n"))
    chunks.push(Buffer.from(part.body))
    chunks.push(Buffer.from("\r\n"))
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`))
  return { body: new Uint8Array(Buffer.concat(chunks)), contentType: `multipart/form-data; boundary=${boundary}` }
}

describe("photo uploads", () => {
  it("a phone JPEG: 201 with Location and signed URLs; upright, metadata stripped, WebP renditions; listed in order", async () => {
    const api = server()
    const pet = await createPet(api, { name: "Tabby", categoryId: 1 })
    const created = await upload(api, pet.id, await phoneJpeg())
    expect(created.status).toBe(201)
    const photo = created.json as PhotoBody
    expect(created.headers.get("location")).toBe(`/v1/pets/${pet.id}/photos/${photo.id}/original`)
    expect(photo).toMatchObject({ petId: pet.id, contentType: "image/jpeg", width: 400, height: 600 })
    for (const [rendition, url] of Object.entries(photo.urls)) {
      expect(url).toMatch(new RegExp(`^/v1/pets/${pet.id}/photos/${photo.id}/${rendition}\\?expires=\\d+&signature=[\\w-]{43}$`))
    }
    // The signed URL alone, without a key, as an <img> sends it.
    const original = await api.call("GET", photo.urls.original)
    expect(original.status).toBe(200)
    expect(original.headers.get("content-type")).toBe("image/jpeg")
    expect(original.bytes.length).toBe(photo.bytes)
    const metadata = await sharp(original.bytes).metadata()
    expect([metadata.width, metadata.height, metadata.exif, metadata.orientation]).toEqual([400, 600, undefined, undefined])
    expect(Buffer.from(original.bytes).toString("latin1")).not.toContain("PhoneMaker")
    const thumb = await api.call("GET", photo.urls.thumb)
    expect(thumb.headers.get("content-type")).toBe("image/webp")
    expect((await sharp(thumb.bytes).metadata()).height).toBe(256)

    const second = await uploaded(api, pet.id, await png(), "image/png")
    const listed = await api.call("GET", `/v1/pets/${pet.id}/photos`, { headers: AUTH })
    expect(listed.status).toBe(200)
    expect((listed.json as Array<PhotoBody>).map((p) => [p.id, p.contentType])).toEqual([[photo.id, "image/jpeg"], [second.id, "image/png"]])
  })

  it("a multipart form with one file part takes the same path", async () => {
    const api = server()
    const pet = await createPet(api, { name: "Tabby", categoryId: 1 })
    const { body, contentType } = form([{ name: "file", filename: "cat.webp", type: "image/webp", body: await webp(800, 600) }])
    const created = await upload(api, pet.id, body, contentType)
    expect(created.status).toBe(201)
    expect(created.json).toMatchObject({ contentType: "image/webp", width: 800, height: 600 })
    // A file part of unknown type is what its bytes are.
    const untyped = form([{ name: "file", filename: "cat", type: "application/octet-stream", body: await png() }])
    expect((await upload(api, pet.id, untyped.body, untyped.contentType)).json).toMatchObject({ contentType: "image/png" })
    // A part of the wrong name, two files, or no file: 400, nothing stored.
    for (const parts of [
      [{ name: "photo", filename: "a.png", type: "image/png", body: await png() }],
      [{ name: "file", filename: "a.png", type: "image/png", body: await png() }, { name: "file", filename: "b.png", type: "image/png", body: await png() }],
      [{ name: "file", body: "just text" }],
      []
    ]) {
      const bad = form(parts)
      expectError(await upload(api, pet.id, bad.body, bad.contentType), 400, "invalid_request", "file")
    }
    const broken = form([{ name: "file", filename: "a.png", type: "image/png", body: await png() }])
    expectError(await upload(api, pet.id, broken.body.subarray(0, 60), broken.contentType), 400, "invalid_request")
    expect((await api.call("GET", `/v1/pets/${pet.id}/photos`, { headers: AUTH })).json).toHaveLength(2)
  })

  it("hostile bodies get the Error body and store nothing: empty, truncated, a bomb, polyglots, a type that lies", async () => {
    const api = server()
    const pet = await createPet(api, { name: "Tabby", categoryId: 1 })
    const whole = await jpeg(400, 300)
    expectError(await upload(api, pet.id, new Uint8Array(0)), 415, "unsupported_media_type", "empty")
    expectError(await upload(api, pet.id, whole.subarray(0, whole.length / 2)), 400, "invalid_request", "decode")
    expectError(await upload(api, pet.id, pngBomb(), "image/png"), 400, "invalid_request", "100000×100000", "40000000")
    expectError(await upload(api, pet.id, pngMagicThenHtml(), "image/png"), 400, "invalid_request")
    expectError(await upload(api, pet.id, await png(), "image/jpeg"), 415, "unsupported_media_type", "image/png", "image/jpeg")
    expectError(await upload(api, pet.id, new TextEncoder().encode("<svg/>"), "image/png"), 415, "unsupported_media_type")
    expectError(await upload(api, pet.id, whole, "text/html"), 415, "unsupported_media_type", "text/html")
    expectError(
      await api.call("POST", `/v1/pets/${pet.id}/photos`, { body: whole, headers: AUTH }),
      415,
      "unsupported_media_type",
      "(none)"
    )
    expect((await api.call("GET", `/v1/pets/${pet.id}/photos`, { headers: AUTH })).json).toEqual([])
    // An image with a page after it is kept as the image alone, and served as one.
    const polyglot = await uploaded(api, pet.id, await polyglotJpeg())
    const served = await api.call("GET", polyglot.urls.original)
    expect(Buffer.from(served.bytes).toString("latin1")).not.toContain("<script")
    expect(served.headers.get("x-content-type-options")).toBe("nosniff")
    expect(served.headers.get("content-security-policy")).toBe("default-src 'none'")
  })

  it("over PHOTO_MAX_BYTES: 413 before reading when Content-Length says so, and while streaming without it", async () => {
    const api = server({ maxBytes: 2000 })
    const pet = await createPet(api, { name: "Tabby", categoryId: 1 })
    const big = await png(600, 600)
    expect(big.length).toBeGreaterThan(4096)
    const declared = await upload(api, pet.id, big, "image/png", { "content-length": String(big.length) })
    expectError(declared, 413, "payload_too_large", "2000")
    expect(declared.headers.get("connection")).toBe("close")
    expectError(await upload(api, pet.id, big, "image/png"), 413, "payload_too_large", "2000")
    const small = await jpeg(16, 16)
    expect((await upload(api, pet.id, small, "image/jpeg", { "content-length": String(small.length) })).status).toBe(201)
    // Within the limit, an upload is not held to the 4 KiB bound of JSON bodies, declared or not.
    const roomy = server()
    const other = await createPet(roomy, { name: "Tabby", categoryId: 1 })
    expect((await upload(roomy, other.id, big, "image/png", { "content-length": String(big.length) })).status).toBe(201)
    expect((await upload(roomy, other.id, big, "image/png")).status).toBe(201)
  })

  it(`a pet has at most ${MAX_PHOTOS_PER_PET} photos: 409 too_many_photos; an unknown or retired pet gets none: 404`, async () => {
    const api = server()
    const pet = await createPet(api, { name: "Tabby", categoryId: 1 })
    const tiny = await jpeg(8, 8)
    for (let i = 0; i < MAX_PHOTOS_PER_PET; i++) await uploaded(api, pet.id, tiny)
    expectError(await upload(api, pet.id, tiny), 409, "too_many_photos", String(MAX_PHOTOS_PER_PET))
    expectError(await upload(api, 999, tiny), 404, "not_found", "999")
    expectError(await api.call("GET", "/v1/pets/999/photos", { headers: AUTH }), 404, "not_found")
  })

  it("a full processing queue answers 503 with Retry-After", async () => {
    const api = server({ processing: { ...PhotoProcessorSharp.DEFAULTS, concurrency: 1, queue: 0, retryAfterSeconds: 3 } })
    const pet = await createPet(api, { name: "Tabby", categoryId: 1 })
    const big = await jpeg(3000, 2000)
    const results = await Promise.all([upload(api, pet.id, big), upload(api, pet.id, big), upload(api, pet.id, big)])
    const busy = results.filter((result) => result.status === 503)
    expect(busy.length).toBeGreaterThan(0)
    for (const result of busy) {
      expectError(result, 503, "service_unavailable", "busy")
      expect(result.headers.get("retry-after")).toBe("3")
    }
    expect(results.filter((result) => result.status === 201).length).toBeGreaterThan(0)
  }, 60_000)

  it("needs a write key: a read key is 403, no key 401", async () => {
    const api = server()
    const pet = await createPet(api, { name: "Tabby", categoryId: 1 })
    const body = await jpeg()
    expectError(await api.call("POST", `/v1/pets/${pet.id}/photos`, { body, headers: { ...READ, "content-type": "image/jpeg" } }), 403, "forbidden")
    expectError(await api.call("POST", `/v1/pets/${pet.id}/photos`, { body, headers: { "content-type": "image/jpeg" } }), 401, "unauthorized")
  })

  it("honours Idempotency-Key: the same bytes replay the first answer; other bytes are 422", async () => {
    const api = server()
    const pet = await createPet(api, { name: "Tabby", categoryId: 1 })
    const body = await jpeg()
    const first = await upload(api, pet.id, body, "image/jpeg", { "idempotency-key": "photo-1" })
    const again = await upload(api, pet.id, body, "image/jpeg", { "idempotency-key": "photo-1" })
    expect(first.status).toBe(201)
    expect([again.status, again.text, again.headers.get("location")]).toEqual([201, first.text, first.headers.get("location")])
    expectError(await upload(api, pet.id, await png(), "image/png", { "idempotency-key": "photo-1" }), 422, "idempotency_key_reused")
    // A form sent again draws a new boundary: still the same request.
    const part = { name: "file", filename: "a.png", type: "image/png", body: await png() }
    const [once, twice] = [form([part], "boundary-one"), form([part], "boundary-two")]
    const firstForm = await upload(api, pet.id, once.body, once.contentType, { "idempotency-key": "photo-2" })
    const againForm = await upload(api, pet.id, twice.body, twice.contentType, { "idempotency-key": "photo-2" })
    expect([firstForm.status, againForm.status, againForm.text]).toEqual([201, 201, firstForm.text])
    expect((await api.call("GET", `/v1/pets/${pet.id}/photos`, { headers: AUTH })).json).toHaveLength(2)
  })
})

describe("photo renditions", () => {
  it("answer with a strong ETag and 304 on If-None-Match, cached for a year as immutable", async () => {
    const api = server()
    const pet = await createPet(api, { name: "Tabby", categoryId: 1 })
    const photo = await uploaded(api, pet.id, await jpeg())
    const medium = await api.call("GET", photo.urls.medium)
    const etag = medium.headers.get("etag")!
    expect(etag).toMatch(/^"[\w-]{43}"$/)
    expect(medium.headers.get("cache-control")).toBe("public, max-age=31536000, immutable")
    const notModified = await api.call("GET", photo.urls.medium, { headers: { "if-none-match": `"other", ${etag}` } })
    expect([notModified.status, notModified.bytes.length, notModified.headers.get("etag")]).toEqual([304, 0, etag])
    expect((await api.call("GET", photo.urls.medium, { headers: { "if-none-match": `W/${etag}` } })).status).toBe(304)
    expect((await api.call("GET", photo.urls.medium, { headers: { "if-none-match": '"other"' } })).status).toBe(200)
    // Another rendition has another ETag.
    expect((await api.call("GET", photo.urls.thumb)).headers.get("etag")).not.toBe(etag)
  })

  it("need a valid signature or a key: tampered, another path's or expired is 403; a read key works; nothing is 401", async () => {
    const api = server()
    const pet = await createPet(api, { name: "Tabby", categoryId: 1 })
    const photo = await uploaded(api, pet.id, await jpeg())
    const path = photo.urls.thumb.split("?")[0]!
    const query = photo.urls.thumb.split("?")[1]!
    const signature = new URLSearchParams(query).get("signature")!
    const expires = Number(new URLSearchParams(query).get("expires"))
    const tampered = `${path}?expires=${expires}&signature=${signature.slice(0, -2)}${signature.endsWith("AA") ? "BB" : "AA"}`
    expectError(await api.call("GET", tampered), 403, "forbidden", "signature")
    expectError(await api.call("GET", `${path}?expires=${expires + 60}&signature=${signature}`), 403, "forbidden")
    expectError(await api.call("GET", `${photo.urls.medium.split("?")[0]}?${query}`), 403, "forbidden")
    expectError(await api.call("GET", `${path}?signature=${signature}`), 403, "forbidden")
    // A bad signature is refused even beside a valid key.
    expectError(await api.call("GET", tampered, { headers: AUTH }), 403, "forbidden")
    expect((await api.call("GET", path, { headers: READ })).status).toBe(200)
    expectError(await api.call("GET", path), 401, "unauthorized")
    // An hour and a minute on, the URL has expired.
    const live = Effect.runSync(Effect.clockWith(Effect.succeed))
    const at = expires * 1000 + 1
    const later: Clock.Clock = { ...live, currentTimeMillisUnsafe: () => at, currentTimeMillis: Effect.succeed(at) }
    expectError(await api.call("GET", photo.urls.thumb, { context: Context.make(Clock.Clock, later) }), 403, "forbidden")
  })

  it("of a deleted photo are 404; the delete is 204, then 404", async () => {
    const api = server()
    const pet = await createPet(api, { name: "Tabby", categoryId: 1 })
    const photo = await uploaded(api, pet.id, await jpeg())
    const removed = await api.call("DELETE", `/v1/pets/${pet.id}/photos/${photo.id}`, { headers: AUTH })
    expect(removed.status).toBe(204)
    expectError(await api.call("GET", photo.urls.thumb), 404, "not_found")
    expectError(await api.call("DELETE", `/v1/pets/${pet.id}/photos/${photo.id}`, { headers: AUTH }), 404, "not_found")
    expect((await api.call("GET", `/v1/pets/${pet.id}/photos`, { headers: AUTH })).json).toEqual([])
    expectError(await api.call("DELETE", `/v1/pets/${pet.id}/photos/${photo.id}`, { headers: READ }), 403, "forbidden")
  })
})

describe("a retired pet", () => {
  it("keeps its photos, listed and served, while its orders are readable; it takes no new one", async () => {
    const api = server()
    const pet = await createPet(api, { name: "Tabby", categoryId: 1, status: "available" })
    const photo = await uploaded(api, pet.id, await jpeg())
    expect((await api.call("DELETE", `/v1/pets/${pet.id}`, { headers: AUTH })).status).toBe(204)
    expect((await api.call("GET", `/v1/pets/${pet.id}/photos`, { headers: AUTH })).json).toMatchObject([{ id: photo.id }])
    expect((await api.call("GET", photo.urls.thumb)).status).toBe(200)
    expectError(await upload(api, pet.id, await jpeg()), 404, "not_found")
  })
})

