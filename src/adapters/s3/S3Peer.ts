/**
 * `@aws-sdk/client-s3` and `@aws-sdk/s3-request-presigner`, the object store's client:
 * optional peer dependencies, so that an embedder who keeps photos in the memory store or
 * the database installs neither. Loaded here, once, by the one module that needs them at
 * run time: without one, the import fails with a message naming the package to install.
 */
import { missingPeer } from "../process/MissingPeer.ts"

const ENTRY = "animal-store photos in an S3-compatible object store (PHOTO_STORE=s3)"

const isNotFound = (error: unknown): boolean =>
  typeof error === "object" && error !== null && "code" in error && error.code === "ERR_MODULE_NOT_FOUND"

const load = <A>(name: string, loading: Promise<A>): Promise<A> =>
  loading.catch((error: unknown) => {
    throw isNotFound(error) ? missingPeer(ENTRY, name, error) : error
  })

/** The S3 client and its commands. */
export const S3 = await load("@aws-sdk/client-s3", import("@aws-sdk/client-s3"))

/** Presigned URLs: a GET that needs no credentials until it expires. */
export const { getSignedUrl } = await load("@aws-sdk/s3-request-presigner", import("@aws-sdk/s3-request-presigner"))
