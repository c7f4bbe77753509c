/**
 * A real S3-compatible server for the tests (s3rver, objects in a temporary directory),
 * on a free port of 127.0.0.1, with one empty bucket; and the PhotoStoreS3 options that
 * reach it.
 */
import { Effect, Option } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import S3rver from "s3rver"
import type * as PhotoStoreS3 from "../../../src/adapters/s3/PhotoStoreS3.ts"

/** s3rver's one account: it checks every request's signature against these. */
export const CREDENTIALS = { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" }
const BUCKET = "photos"

export interface S3Server {
  readonly endpoint: string
  readonly options: (timeout?: PhotoStoreS3.Options["timeout"]) => PhotoStoreS3.Options
  /** Stops the server (its open connections too); a second stop does nothing. */
  readonly stop: () => Promise<void>
}

/** Starts a server; stopped, its directory goes. */
export const start = async (): Promise<S3Server> => {
  const directory = mkdtempSync(join(tmpdir(), "animal-store-s3-"))
  const server = new S3rver({ address: "127.0.0.1", port: 0, silent: true, directory, configureBuckets: [{ name: BUCKET }] })
  const { port } = await server.run()
  const endpoint = `http://127.0.0.1:${port}`
  let stopping: Promise<void> | undefined
  return {
    endpoint,
    options: (timeout = "5 seconds") => ({
      endpoint: Option.some(endpoint),
      bucket: BUCKET,
      region: "us-east-1",
      timeout,
      credentials: CREDENTIALS
    }),
    stop: () =>
      stopping ??= (async () => {
        // Kept-alive client sockets would hold close() open until they time out.
        const closed = server.close()
        server.httpServer.closeAllConnections()
        await closed
        rmSync(directory, { recursive: true, force: true })
      })()
  }
}

/** A server for the scope's life. */
export const scoped = Effect.acquireRelease(Effect.promise(start), (server) => Effect.promise(server.stop))
