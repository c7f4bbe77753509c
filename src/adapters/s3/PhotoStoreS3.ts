import type { S3Client, S3ClientConfig } from "@aws-sdk/client-s3"
import { DateTime, Duration, Effect, Layer, Option } from "effect"
import { StoreUnavailable } from "../../domain/Errors.ts"
import { sniffImageType } from "../../domain/photos/ImageType.ts"
import { PhotoStore } from "../../ports/photos/PhotoStore.ts"
import * as Spans from "../observability/Spans.ts"
import { getSignedUrl, S3 } from "./S3Peer.ts"

/** Where the bucket is and how long one request to it may take. */
export interface Options {
  /**
   * An S3-compatible server's address (MinIO, Ceph, a cloud's S3 API), addressed
   * path-style (`endpoint/bucket/key`), as such servers expect; none for AWS S3 itself.
   */
  readonly endpoint: Option.Option<string>
  /** The bucket, the service's own: the orphan sweep deletes whatever in it no photo record names. */
  readonly bucket: string
  readonly region: string
  /** The deadline of each request to the store, its retries included. */
  readonly timeout: Duration.Input
  /** Credentials; omitted, the AWS SDK's default chain (AWS_ACCESS_KEY_ID and the rest, profiles, roles). */
  readonly credentials?: S3ClientConfig["credentials"]
}

// S3 keeps write times to the second (LastModified in a listing): an object listed at
// second s was written somewhen in [s, s + 1 s).
const TIMESTAMP_RESOLUTION_MILLIS = 1000

// What a request that outlived the deadline fails with.
const TIMED_OUT = Symbol("timed out")

// A presigned URL lives at least a second and at most 7 days, S3's bounds.
const PRESIGN_MIN_SECONDS = 1
const PRESIGN_MAX_SECONDS = 7 * 24 * 3600

// Bytes never change under a key: whoever holds a URL may keep them.
const IMMUTABLE = "public, max-age=31536000, immutable"

/** The SDK's name of a failure (NoSuchKey, AccessDenied, …), or a socket error's code. */
const nameOf = (error: unknown): string => {
  if (typeof error !== "object" || error === null) return String(error)
  const { code, name } = error as { readonly code?: unknown; readonly name?: unknown }
  return typeof code === "string" ? code : typeof name === "string" ? name : "unknown error"
}

const statusOf = (error: unknown): number | undefined =>
  (error as { readonly $metadata?: { readonly httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode

/**
 * Photos' bytes in a bucket of an S3-compatible object store, one object per key, written
 * with the image's Content-Type so that a presigned URL serves it as the image it is.
 *
 * Every failure of the store (unreachable, refusing, slow past the deadline, a missing
 * bucket or denied credentials) is StoreUnavailable: none is a bug of the service, and
 * each is fixed outside it. A missing object is none.
 */
export const make = (options: Options) =>
  Effect.gen(function*() {
    const client: S3Client = yield* Effect.acquireRelease(
      Effect.sync(() =>
        new S3.S3Client({
          region: options.region,
          ...Option.match(options.endpoint, {
            onNone: () => ({}),
            onSome: (endpoint) => ({ endpoint, forcePathStyle: true })
          }),
          ...(options.credentials === undefined ? {} : { credentials: options.credentials }),
          // Checksums only where S3 requires them: several S3-compatible servers refuse the
          // SDK's default trailing checksums (aws-chunked bodies).
          requestChecksumCalculation: "WHEN_REQUIRED",
          responseChecksumValidation: "WHEN_REQUIRED"
        })
      ),
      (client) => Effect.sync(() => client.destroy())
    )
    const { bucket } = options
    const timeout = Duration.fromInputUnsafe(options.timeout)
    const millis = Duration.toMillis(timeout)

    /**
     * One request, bounded by the deadline: the SDK's own retries happen inside it. On
     * the deadline the request is aborted and the call fails at once, whether or not
     * the SDK heeds the abort (a credential look-up does not).
     */
    const request = <A>(run: (signal: AbortSignal) => Promise<A>) =>
      Effect.tryPromise({
        try: (interrupted) =>
          new Promise<A>((resolve, reject) => {
            const controller = new AbortController()
            const abort = () => controller.abort(interrupted.reason)
            interrupted.addEventListener("abort", abort, { once: true })
            const timer = setTimeout(() => {
              reject(TIMED_OUT)
              controller.abort(TIMED_OUT)
            }, millis)
            run(controller.signal).then(resolve, reject).finally(() => {
              clearTimeout(timer)
              interrupted.removeEventListener("abort", abort)
            })
          }),
        catch: (error) => error
      })

    const unavailable = (error: unknown) =>
      new StoreUnavailable({
        message: error === TIMED_OUT
          ? `the object store did not answer within ${Duration.format(timeout)}`
          : `the object store is unavailable: ${nameOf(error)}`
      })

    const bounded = <A>(run: (signal: AbortSignal) => Promise<A>) =>
      Effect.mapError(request(run), unavailable)

    const exists = (key: string) =>
      request((abortSignal) => client.send(new S3.HeadObjectCommand({ Bucket: bucket, Key: key }), { abortSignal })).pipe(
        Effect.as(true),
        Effect.catchIf((error) => statusOf(error) === 404, () => Effect.succeed(false)),
        Effect.mapError(unavailable)
      )

    return PhotoStore.of({
      // Written once: a server without conditional writes is stopped by the look first,
      // one with them (If-None-Match) also when two writes of a key race; its refusal
      // (412) means the first bytes are there, which is what a second put keeps.
      put: Spans.method("PhotoStore.put", (key: string, bytes: Uint8Array) =>
        Effect.flatMap(exists(key), (found) =>
          found ? Effect.void : request((abortSignal) =>
            client.send(
              new S3.PutObjectCommand({
                Bucket: bucket,
                Key: key,
                // Copied: the caller's buffer may change while the request is under way.
                Body: bytes.slice(),
                ContentType: sniffImageType(bytes) ?? "application/octet-stream",
                CacheControl: IMMUTABLE,
                IfNoneMatch: "*"
              }),
              { abortSignal }
            )
          ).pipe(
            Effect.asVoid,
            Effect.catchIf((error) => statusOf(error) === 412, () => Effect.void),
            Effect.mapError(unavailable)
          ))),
      get: Spans.method("PhotoStore.get", (key: string) =>
        request(async (abortSignal) => {
          const answer = await client.send(new S3.GetObjectCommand({ Bucket: bucket, Key: key }), { abortSignal })
          return Option.some(await answer.Body!.transformToByteArray())
        }).pipe(
          // NoSuchKey, not NoSuchBucket: a missing bucket is the store's failure.
          Effect.catchIf((error) => nameOf(error) === "NoSuchKey", () => Effect.succeedNone),
          Effect.mapError(unavailable)
        )),
      // Up to 1,000 keys a request, S3's bound; a key without an object is no error.
      delete: Spans.method("PhotoStore.delete", (keys: ReadonlyArray<string>) =>
        Effect.forEach(chunks(keys, 1000), (chunk) =>
          bounded(async (abortSignal) => {
            const answer = await client.send(
              new S3.DeleteObjectsCommand({
                Bucket: bucket,
                Delete: { Objects: chunk.map((key) => ({ Key: key })), Quiet: true }
              }),
              { abortSignal }
            )
            const failed = answer.Errors?.[0]
            if (failed !== undefined) throw Object.assign(new Error(failed.Message), { name: failed.Code ?? "DeleteFailed" })
          }), { discard: true })),
      // S3 lists by key, not by time: the whole bucket is read, a page of 1,000 a request,
      // and sorted. Its cost grows with the bucket, which the sweep pays once a pass per batch.
      olderThan: Spans.method("PhotoStore.olderThan", (before: DateTime.Utc, limit: number) =>
        Effect.gen(function*() {
          const cutoff = DateTime.toEpochMillis(before)
          const old: Array<{ readonly key: string; readonly at: number }> = []
          let token: string | undefined
          do {
            const page = yield* bounded((abortSignal) =>
              client.send(new S3.ListObjectsV2Command({ Bucket: bucket, ContinuationToken: token }), { abortSignal })
            )
            for (const object of page.Contents ?? []) {
              const at = object.LastModified?.getTime()
              // Only what was surely written before the cutoff: up to the end of its second.
              if (object.Key !== undefined && at !== undefined && at + TIMESTAMP_RESOLUTION_MILLIS <= cutoff) {
                old.push({ key: object.Key, at })
              }
            }
            token = page.IsTruncated === true ? page.NextContinuationToken : undefined
          } while (token !== undefined)
          return old.sort((a, b) => a.at - b.at || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
            .slice(0, limit).map((object) => object.key)
        })),
      redirectUrl: Spans.method("PhotoStore.redirectUrl", (key: string, ttl: Duration.Duration) =>
        bounded(() =>
          getSignedUrl(client, new S3.GetObjectCommand({ Bucket: bucket, Key: key }), {
            expiresIn: Math.min(PRESIGN_MAX_SECONDS, Math.max(PRESIGN_MIN_SECONDS, Math.ceil(Duration.toSeconds(ttl))))
          })
        ))
    })
  })

const chunks = <A>(items: ReadonlyArray<A>, size: number): ReadonlyArray<ReadonlyArray<A>> =>
  Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size))

/** A PhotoStore in an S3 bucket; the client's sockets close with the layer. */
export const layer = (options: Options): Layer.Layer<PhotoStore> => Layer.effect(PhotoStore, make(options))
