/**
 * The photo store the service's ports carry: the store's own unless PHOTO_STORE=s3 picks
 * the bucket, with the credentials of the standard AWS variables.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { ConfigProvider, Context, Effect, Layer, Option } from "effect"
import * as PhotoStoreS3 from "../../src/adapters/s3/PhotoStoreS3.ts"
import { PhotoStore } from "../../src/ports/photos/PhotoStore.ts"
import { StoreConfig } from "../../src/programs/StoreConfig.ts"
import * as StoreWiring from "../../src/programs/StoreWiring.ts"
import * as S3Server from "../adapters/s3/S3Server.ts"

let server: S3Server.S3Server
const saved = { id: process.env["AWS_ACCESS_KEY_ID"], secret: process.env["AWS_SECRET_ACCESS_KEY"] }

beforeAll(async () => {
  server = await S3Server.start()
  // Read by the SDK's default chain when the wired store first signs a request.
  process.env["AWS_ACCESS_KEY_ID"] = S3Server.CREDENTIALS.accessKeyId
  process.env["AWS_SECRET_ACCESS_KEY"] = S3Server.CREDENTIALS.secretAccessKey
})

afterAll(async () => {
  await server.stop()
  for (const [name, value] of [["AWS_ACCESS_KEY_ID", saved.id], ["AWS_SECRET_ACCESS_KEY", saved.secret]] as const) {
    if (value === undefined) delete process.env[name]
    else process.env[name] = value
  }
})

// Writes a key through the ports the wiring makes for `env`; answers whether the bucket has it.
const putThroughPorts = (env: Record<string, string>) =>
  Effect.gen(function*() {
    const { config } = yield* Effect.all({ config: StoreConfig }).pipe(
      Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env }))
    )
    const key = `wiring-${Date.now().toString(36)}/original`
    const ports = yield* Layer.build(StoreWiring.ports(config, { listen: false }))
    const store = Context.getOption(ports, PhotoStore)
    assert.isTrue(Option.isSome(store), "the ports carry no PhotoStore")
    yield* Option.getOrThrow(store).put(key, Uint8Array.of(1, 2, 3))
    const bucket = yield* PhotoStoreS3.make(server.options())
    return Option.isSome(yield* bucket.get(key))
  }).pipe(Effect.scoped)

describe("StoreWiring: the photo store", () => {
  it.live("PHOTO_STORE=s3: the bytes go to the bucket, signed with the AWS variables' credentials", () =>
    Effect.gen(function*() {
      const inBucket = yield* putThroughPorts({
        STORE: "memory",
        PHOTO_STORE: "s3",
        S3_ENDPOINT: server.endpoint,
        S3_BUCKET: server.options().bucket
      })
      assert.isTrue(inBucket)
    }))

  it.live("unset: the store keeps them, the bucket gets nothing", () =>
    Effect.gen(function*() {
      const inBucket = yield* putThroughPorts({ STORE: "memory", S3_ENDPOINT: server.endpoint, S3_BUCKET: server.options().bucket })
      assert.isFalse(inBucket)
    }))
})
