/**
 * Photos through the real router with their bytes in an S3-compatible object store (s3rver):
 * a rendition's signed URL answers a redirect to a presigned URL of the store, which a
 * client follows to the bytes without any credential.
 */
import { Duration, Layer } from "effect"
import sharp from "sharp"
import { describe, expect, it, onTestFinished } from "vitest"
import * as StoreMemory from "../../../src/adapters/memory/StoreMemory.ts"
import * as PhotoStoreS3 from "../../../src/adapters/s3/PhotoStoreS3.ts"
import { jpeg } from "../images/TestImages.ts"
import * as S3Server from "../s3/S3Server.ts"
import { AUTH, createPet, makeTestServer } from "./TestServer.ts"

// A signed URL of a photo record, as the router takes it: path and query.
const pathOf = (url: string) => {
  const { pathname, search } = new URL(url, "http://localhost")
  return pathname + search
}

const server = async () => {
  const s3 = await S3Server.start()
  // The memory store's pets and records; the later layer's PhotoStore, the bucket's, wins.
  const made = makeTestServer(
    Layer.merge(StoreMemory.layer, PhotoStoreS3.layer(s3.options())),
    { photos: { maxBytes: 10 * 1024 * 1024, urls: { ttl: Duration.hours(1), secrets: [] } } }
  )
  onTestFinished(async () => {
    await made.dispose()
    await s3.stop()
  })
  return { api: made, s3 }
}

describe("photos on S3", () => {
  it("a rendition's signed URL redirects to the object store, whose presigned URL serves the bytes", async () => {
    const { api, s3 } = await server()
    const pet = await createPet(api, { name: "Tabby", categoryId: 1 })
    const uploaded = await api.call("POST", `/v1/pets/${pet.id}/photos`, {
      body: await jpeg(),
      headers: { ...AUTH, "content-type": "image/jpeg" }
    })
    expect({ status: uploaded.status, body: uploaded.text }).toMatchObject({ status: 201 })
    const { urls } = uploaded.json as { readonly urls: Record<"original" | "thumb", string> }

    // No key: the signed URL alone, as an <img> sends it.
    const redirect = await api.call("GET", pathOf(urls.thumb))
    expect(redirect.status).toBe(302)
    expect(redirect.headers.get("cache-control")).toBe("private, max-age=240")
    const location = redirect.headers.get("location")!
    expect(location.startsWith(`${s3.endpoint}/`), location).toBe(true)
    expect(new URL(location).searchParams.get("X-Amz-Expires")).toBe("300")

    const thumb = await fetch(location)
    expect(thumb.status).toBe(200)
    expect(thumb.headers.get("content-type")).toBe("image/webp")
    const metadata = await sharp(new Uint8Array(await thumb.arrayBuffer())).metadata()
    expect(metadata.format).toBe("webp")
    expect(Math.max(metadata.width, metadata.height)).toBeLessThanOrEqual(256)

    const original = await fetch((await api.call("GET", pathOf(urls.original))).headers.get("location")!)
    expect(original.headers.get("content-type")).toBe("image/jpeg")
    expect((await sharp(new Uint8Array(await original.arrayBuffer())).metadata()).format).toBe("jpeg")
  })
})
