/**
 * What clients see when the store fails: a defect becomes a 500 without internals, an
 * unavailable store a 503; both in the documented Error shape.
 */
import { Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { StoreUnavailable } from "../../../src/domain/Errors.ts"
import { OrderRepository } from "../../../src/ports/orders/OrderRepository.ts"
import { PetRepository } from "../../../src/ports/pets/PetRepository.ts"
import { AUTH, expectError, expectNoInternals, freshServer, JSON_AUTH, type TestServer } from "./TestServer.ts"

// A defect whose message and stack name source files, as a real bug's would.
const defect = () => {
  const error = new Error("boom at /work/main/src/adapters/secret.ts:12:34 password=hunter2")
  error.stack = `Error: boom\n    at explode (/work/main/src/adapters/secret.ts:12:34)\n    at file:///work/main/x.js:1:1`
  return Effect.die(error)
}

// Both ports, every member failing the same way.
const failing = (fail: () => Effect.Effect<never, StoreUnavailable>) =>
  Layer.mergeAll(
    Layer.succeed(PetRepository)(PetRepository.of({
      create: fail,
      get: fail,
      update: fail,
      delete: fail,
      list: fail,
      tags: fail,
      inventory: Effect.suspend(fail),
      ready: Effect.suspend(fail)
    })),
    Layer.succeed(OrderRepository)(OrderRepository.of({ place: fail, get: fail, list: fail, transition: fail }))
  )

const dying = failing(defect)

const unavailable = (message: string) => failing(() => Effect.fail(new StoreUnavailable({ message })))

const everyOperation = (server: TestServer) => [
  server.call("GET", "/v1/pets", { headers: AUTH }),
  server.call("POST", "/v1/pets", { body: `{"name":"Rex","categoryId":1}`, headers: JSON_AUTH }),
  server.call("GET", "/v1/pets/1", { headers: AUTH }),
  server.call("GET", "/v1/store/orders", { headers: AUTH }),
  server.call("POST", "/v1/store/orders", { body: `{"petId":1}`, headers: JSON_AUTH }),
  server.call("GET", "/v1/store/orders/1", { headers: AUTH }),
  server.call("POST", "/v1/store/orders/1/approve", { headers: AUTH }),
  server.call("POST", "/v1/store/orders/1/deliver", { headers: AUTH }),
  server.call("POST", "/v1/store/orders/1/cancel", { headers: AUTH }),
  server.call("GET", "/v1/store/inventory", { headers: AUTH })
]

describe("store failures", () => {
  it("a defect in the store is 500 internal, with no stack, path or secret in the body", async () => {
    const server = freshServer(dying)
    for (const result of await Promise.all(everyOperation(server))) {
      const body = expectError(result, 500, "internal")
      expectNoInternals(result.text)
      expect(result.text).not.toContain("boom")
      expect(result.text).not.toContain("hunter2")
      expect(body.message).not.toContain("secret")
    }
  })

  it("authentication is still checked before the store is touched", async () => {
    const server = freshServer(dying)
    expectError(await server.call("GET", "/v1/pets"), 401, "unauthorized")
  })

  it("an unavailable store is 503 service_unavailable on every operation", async () => {
    const server = freshServer(unavailable("the store did not answer in time"))
    for (const result of await Promise.all(everyOperation(server))) {
      expectError(result, 503, "service_unavailable")
    }
  })

  it("GET /readyz answers 503 in the Error shape while the store is unavailable, and /healthz stays 200", async () => {
    const server = freshServer(unavailable("the store did not answer in time"))
    expectError(await server.call("GET", "/readyz"), 503, "service_unavailable", "not ready: store: ")
    const health = await server.call("GET", "/healthz")
    expect(health.status).toBe(200)
  })

  it("GET /readyz with a dying store is 500 without internals", async () => {
    const server = freshServer(dying)
    const result = await server.call("GET", "/readyz")
    expectError(result, 500, "internal")
    expect(result.text).not.toContain("boom")
  })
})
