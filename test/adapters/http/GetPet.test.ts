import { it as effectIt } from "@effect/vitest"
import { Clock, Context, Effect } from "effect"
import { TestClock } from "effect/testing"
import { describe, expect, it } from "vitest"
import {
  API_KEY,
  AUTH,
  type CallResult,
  createPet,
  expectError,
  freshServer,
  JSON_AUTH,
  type TestServer
} from "./TestServer.ts"

// Written out here rather than imported, so a wrong constant in src fails these tests.
const DEPRECATION = "@1795219200" // 2026-11-21T00:00:00Z
const SUNSET = "Thu, 05 Dec 2030 00:00:00 GMT"
const SUCCESSOR = `</v1/pets>; rel="successor-version"`
const SUNSET_MILLIS = Date.parse("2030-12-05T00:00:00Z")

const expectDeprecationHeaders = (result: CallResult) => {
  expect(result.headers.get("deprecation")).toBe(DEPRECATION)
  expect(result.headers.get("sunset")).toBe(SUNSET)
  expect(result.headers.get("link")).toBe(SUCCESSOR)
}

const expectNoDeprecationHeaders = (result: CallResult) => {
  expect(result.headers.get("deprecation")).toBeNull()
  expect(result.headers.get("sunset")).toBeNull()
  expect(result.headers.get("link") ?? "").not.toContain("successor-version")
}

const get = (server: TestServer, path: string, headers: Record<string, string> = AUTH) =>
  server.call("GET", path, { headers })

describe("GET /v1/pets/{petId} (getPet)", () => {
  it("answers 200 with the Pet", async () => {
    const server = freshServer()
    for (const body of [
      `{"name":"Rex","categoryId":9007199254740993,"status":"pending"}`,
      `{"name":"Tom","categoryId":-9223372036854775808}`
    ]) {
      expect((await server.call("POST", "/v1/pets", { body, headers: JSON_AUTH })).status).toBe(201)
    }
    const rex = await get(server, "/v1/pets/1")
    expect(rex.status).toBe(200)
    expect(rex.headers.get("content-type")).toBe("application/json")
    expect(rex.text).toBe(`{"id":1,"name":"Rex","categoryId":9007199254740993,"status":"pending","tags":[],"version":1}`)
    const tom = await get(server, "/v1/pets/2")
    expect(tom.status).toBe(200)
    expect(tom.text).toBe(`{"id":2,"name":"Tom","categoryId":-9223372036854775808,"tags":[],"version":1}`)
  })

  it.each(["3", "0", "-1", "9223372036854775807", "-9223372036854775808"])(
    "answers an unknown id %s with 404 not_found",
    async (id) => {
      const server = freshServer()
      await createPet(server, { name: "Rex", categoryId: 1 })
      await createPet(server, { name: "Tom", categoryId: 1 })
      const result = await get(server, `/v1/pets/${id}`)
      expectError(result, 404, "not_found")
      expectDeprecationHeaders(result)
    }
  )

  it.each(["abc", "1.5", "1e3", "0x10", "01", "%201", "1%20", "-", "+1", "１"])(
    "refuses the non-integer id %s with 400 invalid_request naming petId",
    async (id) => {
      const server = freshServer()
      await createPet(server, { name: "Rex", categoryId: 1 })
      const result = await get(server, `/v1/pets/${id}`)
      expectError(result, 400, "invalid_request", "petId")
      expectDeprecationHeaders(result)
    }
  )

  it.each(["9223372036854775808", "-9223372036854775809", "99999999999999999999999999"])(
    "refuses the id %s beyond int64 with 400 invalid_request naming petId",
    async (id) => {
      const server = freshServer()
      const result = await get(server, `/v1/pets/${id}`)
      expectError(result, 400, "invalid_request", "petId")
      expectDeprecationHeaders(result)
    }
  )

  describe("deprecation headers", () => {
    it("are on 200", async () => {
      const server = freshServer()
      await createPet(server, { name: "Rex", categoryId: 1 })
      const result = await get(server, "/v1/pets/1")
      expect(result.status).toBe(200)
      expectDeprecationHeaders(result)
    })

    it("are on 401 without a key, with the bare challenge", async () => {
      const server = freshServer()
      const result = await get(server, "/v1/pets/1", {})
      expectError(result, 401, "unauthorized")
      expect(result.headers.get("www-authenticate")).toBe(`Bearer realm="animal-store"`)
      expectDeprecationHeaders(result)
    })

    it("are on 401 with a wrong key", async () => {
      const server = freshServer()
      const result = await get(server, "/v1/pets/1", { authorization: `Bearer ${API_KEY}x` })
      expectError(result, 401, "unauthorized")
      expect(result.headers.get("www-authenticate")).toBe(`Bearer realm="animal-store", error="invalid_token"`)
      expectDeprecationHeaders(result)
    })

    it("are on 401 for a malformed id without a key (auth comes first)", async () => {
      const server = freshServer()
      const result = await get(server, "/v1/pets/abc", {})
      expectError(result, 401, "unauthorized")
      expectDeprecationHeaders(result)
    })

    it("are on HEAD responses of the route", async () => {
      const server = freshServer()
      await createPet(server, { name: "Rex", categoryId: 1 })
      const result = await server.call("HEAD", "/v1/pets/1", { headers: AUTH })
      expect(result.status).toBe(200)
      expect(result.text).toBe("")
      expectDeprecationHeaders(result)
    })

    it("are not on other routes", async () => {
      const server = freshServer()
      for (let i = 0; i < 3; i++) await createPet(server, { name: `pet ${i}`, categoryId: 1 })
      const responses = [
        await server.call("POST", "/v1/pets", { body: `{"name":"Rex","categoryId":1}`, headers: JSON_AUTH }),
        await server.call("POST", "/v1/pets", { body: `{}`, headers: JSON_AUTH }),
        await server.call("POST", "/v1/pets", { body: `{}`, headers: { "content-type": "application/json" } }),
        await get(server, "/v1/pets"),
        await get(server, "/v1/pets?limit=1"),
        await get(server, "/v1/pets?limit=0"),
        await get(server, "/v1/pets", {}),
        await get(server, "/v1/pets/1/extra"),
        await get(server, "/v1/petsx/1"),
        await get(server, "/healthz", {}),
        await get(server, "/readyz", {}),
        await get(server, "/v1/openapi.json", {})
      ]
      expect(responses.map((r) => r.status)).toEqual([201, 400, 401, 200, 200, 400, 401, 404, 404, 200, 200, 200])
      for (const response of responses) expectNoDeprecationHeaders(response)
      // The paginated list keeps its own rel="next" Link.
      expect(responses[4]!.headers.get("link")).toMatch(/; rel="next"$/)
    })
  })

  describe("sunset cut-over (TestClock)", () => {
    // Runs the request on a fiber whose Clock is this test's TestClock.
    const getAt = (server: TestServer, path: string, headers: Record<string, string> = AUTH) =>
      Effect.gen(function*() {
        const clock = yield* TestClock.testClockWith(Effect.succeed)
        return yield* Effect.promise(() =>
          server.call("GET", path, { headers, context: Context.make(Clock.Clock, clock) })
        )
      })

    const setUp = Effect.promise(async () => {
      const server = freshServer()
      await createPet(server, { name: "Rex", categoryId: 1, status: "sold" })
      return server
    })

    effectIt.effect("serves the pet until just before 2030-12-05T00:00:00Z", () =>
      Effect.gen(function*() {
        const server = yield* setUp
        yield* TestClock.setTime(SUNSET_MILLIS - 24 * 60 * 60 * 1000)
        const dayBefore = yield* getAt(server, "/v1/pets/1")
        expect(dayBefore.status).toBe(200)
        yield* TestClock.setTime(SUNSET_MILLIS - 1)
        const result = yield* getAt(server, "/v1/pets/1")
        expect(result.status).toBe(200)
        expect(result.text).toBe(`{"id":1,"name":"Rex","categoryId":1,"status":"sold","tags":[],"version":1}`)
        expectDeprecationHeaders(result)
      }))

    effectIt.effect("answers 410 gone exactly at the sunset instant and after it", () =>
      Effect.gen(function*() {
        const server = yield* setUp
        for (const at of [SUNSET_MILLIS, SUNSET_MILLIS + 1, SUNSET_MILLIS + 365 * 24 * 60 * 60 * 1000]) {
          yield* TestClock.setTime(at)
          const result = yield* getAt(server, "/v1/pets/1")
          expectError(result, 410, "gone")
          expectDeprecationHeaders(result)
          // An unknown id is gone too: the operation itself is withdrawn.
          const unknown = yield* getAt(server, "/v1/pets/999")
          expectError(unknown, 410, "gone")
          expectDeprecationHeaders(unknown)
        }
      }))

    effectIt.effect("after the sunset, authentication and id validation still come first", () =>
      Effect.gen(function*() {
        const server = yield* setUp
        yield* TestClock.setTime(SUNSET_MILLIS)
        const anonymous = yield* getAt(server, "/v1/pets/1", {})
        expectError(anonymous, 401, "unauthorized")
        expectDeprecationHeaders(anonymous)
        const malformed = yield* getAt(server, "/v1/pets/abc")
        expectError(malformed, 400, "invalid_request", "petId")
        expectDeprecationHeaders(malformed)
      }))

    effectIt.effect("after the sunset, listPets still works", () =>
      Effect.gen(function*() {
        const server = yield* setUp
        yield* TestClock.setTime(SUNSET_MILLIS + 1)
        const clock = yield* TestClock.testClockWith(Effect.succeed)
        const result = yield* Effect.promise(() =>
          server.call("GET", "/v1/pets?status=sold", { headers: AUTH, context: Context.make(Clock.Clock, clock) })
        )
        expect(result.status).toBe(200)
        expect(result.text).toBe(`[{"id":1,"name":"Rex","categoryId":1,"status":"sold","tags":[],"version":1}]`)
      }))

    effectIt.effect("the TestClock really drives the handler: back before the sunset it serves again", () =>
      Effect.gen(function*() {
        const server = yield* setUp
        yield* TestClock.setTime(SUNSET_MILLIS)
        expect((yield* getAt(server, "/v1/pets/1")).status).toBe(410)
        yield* TestClock.setTime(SUNSET_MILLIS - 1)
        expect((yield* getAt(server, "/v1/pets/1")).status).toBe(200)
      }))
  })
})
