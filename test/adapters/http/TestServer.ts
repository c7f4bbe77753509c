/**
 * In-process harness for the HTTP adapter: the real router, middleware and handlers
 * (HttpApp.layer) over the in-memory store (pets and orders), driven through the Fetch `Request` /
 * `Response` pair, so tests see the exact status, headers and bytes a client would. Every
 * response to a documented operation is checked against the OpenAPI document.
 */
import { type Context, Layer, Redacted, References } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { expect, onTestFinished } from "vitest"
import { expectDocumentedResponse } from "./OpenApiValidator.ts"
import * as ApiKeysStatic from "../../../src/adapters/apikeys/ApiKeysStatic.ts"
import * as HttpApp from "../../../src/adapters/http/server/HttpApp.ts"
import * as PhotoProcessorSharp from "../../../src/adapters/images/PhotoProcessorSharp.ts"
import { ROUTER_CONFIG } from "../../../src/adapters/http/server/routing/RouteTable.ts"
import * as EventLogMemory from "../../../src/adapters/memory/events/EventLogMemory.ts"
import * as IdempotentCreatesMemory from "../../../src/adapters/memory/idempotency/IdempotentCreatesMemory.ts"
import * as PhotoRepositoryMemory from "../../../src/adapters/memory/photos/PhotoRepositoryMemory.ts"
import * as PhotoStoreMemory from "../../../src/adapters/memory/photos/PhotoStoreMemory.ts"
import * as StoreMemory from "../../../src/adapters/memory/StoreMemory.ts"
import * as WebhookRepositoryMemory from "../../../src/adapters/memory/webhooks/WebhookRepositoryMemory.ts"
import type { ApiKeys } from "../../../src/ports/keys/ApiKeys.ts"
import type { OrderRepository } from "../../../src/ports/orders/OrderRepository.ts"
import type { PetRepository } from "../../../src/ports/pets/PetRepository.ts"

/** The only API key the test servers accept. */
export const API_KEY = "test-key-0123456789"

/** Base addresses the test servers document in their OpenAPI `servers`. */
export const SERVERS = {
  production: "https://api.animals.example/v1",
  staging: "https://staging.animals.example/v1"
} as const

/** `Authorization` header with the accepted key. */
export const AUTH = { authorization: `Bearer ${API_KEY}` } as const
/** Headers of an authenticated JSON request. */
export const JSON_AUTH = { ...AUTH, "content-type": "application/json" } as const

export interface CallOptions {
  /**
   * Request body. A string is sent as UTF-8 bytes and, unlike `new Request(.., { body: string })`,
   * gets no implicit `text/plain` content type: the request carries exactly `headers`.
   */
  readonly body?: string | Uint8Array | undefined
  readonly headers?: Readonly<Record<string, string>> | undefined
  /** Services for this request's fiber (e.g. a TestClock as `Clock.Clock`). */
  readonly context?: Context.Context<never> | undefined
}

export interface CallResult {
  readonly status: number
  readonly headers: Headers
  /** The exact response body. */
  readonly text: string
  /** The exact response body, as bytes (compressed bodies are not text). */
  readonly bytes: Uint8Array
  /** The body parsed with plain `JSON.parse` (undefined when it is not JSON). */
  readonly json: unknown
}

export interface TestServer {
  readonly call: (method: string, path: string, options?: CallOptions) => Promise<CallResult>
  readonly dispose: () => Promise<void>
}

const encoder = new TextEncoder()

/**
 * A fresh app over an empty in-memory store (ids start at 1 again), or over `store`,
 * accepting {@link API_KEY}, or the keys `apiKeys` accepts.
 * Logging is off, so the defects some tests provoke do not clutter the output.
 */
export const makeTestServer = (
  store: Layer.Layer<PetRepository | OrderRepository> = StoreMemory.layer,
  options?: HttpApp.Options,
  apiKeys: Layer.Layer<ApiKeys, unknown> = ApiKeysStatic.layer([Redacted.make(API_KEY)]),
  servers: HttpApp.Servers = SERVERS,
  processing: PhotoProcessorSharp.Options = PhotoProcessorSharp.DEFAULTS
): TestServer => {
  const app = HttpApp.layer(servers, options).pipe(
    Layer.provide([store, apiKeys]),
    // For stores made for one test (failing, swappable), which keep no idempotency keys of
    // their own; a store that does (StoreMemory) provides its own, nearer the app.
    Layer.provide([
      IdempotentCreatesMemory.layer(),
      WebhookRepositoryMemory.layer,
      PhotoRepositoryMemory.layer,
      PhotoStoreMemory.layer,
      PhotoProcessorSharp.layer(processing)
    ]),
    // Likewise an empty feed for them; StoreMemory provides its own.
    Layer.provide(EventLogMemory.layerEmpty),
    Layer.provide(HttpServer.layerServices),
    Layer.provideMerge(Layer.succeed(References.MinimumLogLevel, "None"))
  )
  const { handler, dispose } = HttpRouter.toWebHandler(app, { disableLogger: true, routerConfig: ROUTER_CONFIG })
  const call = async (method: string, path: string, options: CallOptions = {}): Promise<CallResult> => {
    const body = typeof options.body === "string" ? encoder.encode(options.body) : options.body
    const request = new Request(`http://localhost${path}`, {
      method,
      headers: options.headers ?? {},
      ...(body === undefined ? {} : { body: body as Uint8Array<ArrayBuffer> })
    })
    const response = await handler(request, options.context)
    const bytes = new Uint8Array(await response.arrayBuffer())
    const text = new TextDecoder().decode(bytes)
    let json: unknown = undefined
    try {
      json = JSON.parse(text)
    } catch {
      json = undefined
    }
    const result = { status: response.status, headers: response.headers, text, bytes, json }
    await expectDocumentedResponse({ method, url: path }, result)
    return result
  }
  return { call, dispose }
}

/** A fresh server that is disposed when the current test finishes. */
export const freshServer = (
  store?: Layer.Layer<PetRepository | OrderRepository>,
  options?: HttpApp.Options,
  apiKeys?: Layer.Layer<ApiKeys, unknown>
): TestServer => {
  const server = makeTestServer(store, options, apiKeys)
  onTestFinished(() => server.dispose())
  return server
}

const STACK_FRAME = /(?:^|\n)\s*at\s|\bat\s+\S+\s+\(|:\d+:\d+\)?(?:$|\n)/
const FILE_PATH = /node_modules|file:\/\/|\/(?:work|src|home|usr|tmp)\/|\.(?:ts|js|mjs|cjs):\d/

/** Asserts that `message` carries no stack trace or source location. */
export const expectNoInternals = (message: string) => {
  expect(message).not.toMatch(STACK_FRAME)
  expect(message).not.toMatch(FILE_PATH)
}

/**
 * Asserts the documented error shape: `content-type: application/json` and exactly
 * `{code, message, status}` with `status` equal to the HTTP status, a non-empty message
 * without internals, and (when given) a message mentioning each of `mentions`.
 */
export const expectError = (
  result: CallResult,
  status: number,
  code: string,
  ...mentions: ReadonlyArray<string>
): { readonly code: string; readonly message: string; readonly status: number } => {
  expect({ status: result.status, body: result.text }).toMatchObject({ status })
  expect(result.headers.get("content-type")).toBe("application/json")
  const body = result.json as { code: string; message: string; status: number }
  expect(body).toBeTypeOf("object")
  expect(body).not.toBeNull()
  expect(Object.keys(body).sort()).toEqual(["code", "message", "status"])
  expect(body.code).toBe(code)
  expect(body.status).toBe(status)
  expect(body.message).toBeTypeOf("string")
  expect(body.message.length).toBeGreaterThan(0)
  expectNoInternals(body.message)
  for (const mention of mentions) expect(body.message).toContain(mention)
  return body
}

/** Creates a pet through the API and returns its parsed body (fails the test unless 201). */
export const createPet = async (
  server: TestServer,
  pet: Readonly<Record<string, unknown>>
): Promise<{ readonly id: number; readonly name: string; readonly categoryId: number; readonly status?: string }> => {
  const result = await server.call("POST", "/v1/pets", { body: JSON.stringify(pet), headers: JSON_AUTH })
  expect({ status: result.status, body: result.text }).toMatchObject({ status: 201 })
  return result.json as { id: number; name: string; categoryId: number; status?: string }
}

/** Every pet in the store, read with the largest page (the tests keep stores below 100 pets). */
export const listAll = async (server: TestServer): Promise<string> => {
  const result = await server.call("GET", "/v1/pets?limit=100", { headers: AUTH })
  expect(result.status).toBe(200)
  expect(result.headers.get("link")).toBeNull()
  return result.text
}
