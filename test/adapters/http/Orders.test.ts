/**
 * The store area over HTTP, in-process on the memory store: placing, reading, listing
 * and moving orders, the pet statuses they drive, the inventory, and every refusal with
 * the Error body.
 */
import { describe, expect, it } from "vitest"
import { AUTH, createPet, expectError, freshServer, JSON_AUTH, listAll, type TestServer } from "./TestServer.ts"

const RFC3339_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z$/

interface OrderJson {
  readonly id: number
  readonly petId: number
  readonly quantity: number
  readonly status: string
  readonly complete: boolean
  readonly createdAt: string
  readonly updatedAt: string
}

const place = (server: TestServer, petId: number | string, headers: Record<string, string> = JSON_AUTH) =>
  server.call("POST", "/v1/store/orders", { headers, body: `{"petId":${petId}}` })

const act = (server: TestServer, orderId: number, action: string) =>
  server.call("POST", `/v1/store/orders/${orderId}/${action}`, { headers: AUTH })

const petStatus = async (server: TestServer, petId: number) =>
  ((await server.call("GET", `/v1/pets/${petId}`, { headers: AUTH })).json as { status?: string }).status

const inventory = async (server: TestServer) => {
  const result = await server.call("GET", "/v1/store/inventory", { headers: AUTH })
  expect(result.status).toBe(200)
  return result.json
}

/** A store with pets 1-3 available, 4 pending, 5 sold, 6 without status. */
const seeded = async () => {
  const server = freshServer()
  for (const status of ["available", "available", "available", "pending", "sold", undefined]) {
    await createPet(server, { name: `pet ${status}`, categoryId: 1, ...(status === undefined ? {} : { status }) })
  }
  return server
}

describe("the store area over HTTP", () => {
  it("places an order: 201, Location, the order body; the pet becomes pending", async () => {
    const server = await seeded()
    const result = await place(server, 1)
    expect(result.status).toBe(201)
    expect(result.headers.get("location")).toBe("/v1/store/orders/1")
    const order = result.json as OrderJson
    expect(order).toMatchObject({ id: 1, petId: 1, quantity: 1, status: "placed", complete: false })
    expect(order.createdAt).toMatch(RFC3339_UTC)
    expect(order.updatedAt).toBe(order.createdAt)
    expect(Object.keys(order).sort()).toEqual(["complete", "createdAt", "id", "petId", "quantity", "status", "updatedAt"])
    expect(await petStatus(server, 1)).toBe("pending")
    const fetched = await server.call("GET", "/v1/store/orders/1", { headers: AUTH })
    expect(fetched.status).toBe(200)
    expect(fetched.text).toBe(result.text)
  })

  it("walks the table: approve, deliver; the pet is sold and the order complete", async () => {
    const server = await seeded()
    await place(server, 2)
    const approved = await act(server, 1, "approve")
    expect(approved.status).toBe(200)
    expect(approved.json).toMatchObject({ status: "approved", complete: false })
    expect(await petStatus(server, 2)).toBe("pending")
    const delivered = await act(server, 1, "deliver")
    expect(delivered.json).toMatchObject({ status: "delivered", complete: true })
    expect(await petStatus(server, 2)).toBe("sold")
  })

  it.each(["placed", "approved"])("cancelling a %s order makes the pet available again", async (from) => {
    const server = await seeded()
    await place(server, 3)
    if (from === "approved") await act(server, 1, "approve")
    const cancelled = await act(server, 1, "cancel")
    expect(cancelled.status).toBe(200)
    expect(cancelled.json).toMatchObject({ status: "cancelled", complete: false })
    expect(await petStatus(server, 3)).toBe("available")
    // The pet can be ordered again: a new order, the old one stays cancelled.
    expect((await place(server, 3)).json).toMatchObject({ id: 2, status: "placed" })
  })

  it.each([
    ["placed", "deliver", "order 1 is placed; it cannot be delivered"],
    ["approved", "approve", "order 1 is approved; it cannot be approved"],
    ["delivered", "cancel", "order 1 is delivered; it cannot be cancelled"],
    ["delivered", "approve", "order 1 is delivered; it cannot be approved"],
    ["cancelled", "deliver", "order 1 is cancelled; it cannot be delivered"],
    ["cancelled", "cancel", "order 1 is cancelled; it cannot be cancelled"]
  ])("refuses a %s order's %s with 409 invalid_transition naming the state, changing nothing", async (state, action, message) => {
    const server = await seeded()
    await place(server, 1)
    const path: Record<string, ReadonlyArray<string>> = {
      placed: [],
      approved: ["approve"],
      delivered: ["approve", "deliver"],
      cancelled: ["cancel"]
    }
    for (const step of path[state]!) expect((await act(server, 1, step)).status).toBe(200)
    const snapshot = async () => [(await server.call("GET", "/v1/store/orders/1", { headers: AUTH })).text, await petStatus(server, 1)]
    const before = await snapshot()
    const refused = await act(server, 1, action)
    expect(expectError(refused, 409, "invalid_transition").message).toBe(message)
    expect(await snapshot()).toEqual(before)
  })

  it.each([[4, "pending"], [5, "sold"], [6, "without a status"]])(
    "refuses to order pet %s (%s) with 409 pet_not_available, storing nothing",
    async (petId, status) => {
      const server = await seeded()
      const pets = await listAll(server)
      const refused = await place(server, petId)
      expect(expectError(refused, 409, "pet_not_available").message).toBe(
        `pet ${petId} is ${status}; only an available pet can be ordered`
      )
      expect(await listAll(server)).toBe(pets)
      expect((await server.call("GET", "/v1/store/orders", { headers: AUTH })).json).toEqual([])
    }
  )

  it("accepts quantity 1, as classic petstore clients send it", async () => {
    const server = await seeded()
    const result = await server.call("POST", "/v1/store/orders", { headers: JSON_AUTH, body: `{"petId":1,"quantity":1}` })
    expect(result.status).toBe(201)
    expect(result.json).toMatchObject({ petId: 1, quantity: 1 })
  })

  it.each([
    ["2", "quantity: must be 1: an order is for one pet"],
    ["0", "quantity: must be 1: an order is for one pet"],
    ["1.5", "quantity: expected an integer"],
    [`"1"`, "quantity: expected an integer"]
  ])("refuses quantity %s saying what is allowed", async (quantity, message) => {
    const server = await seeded()
    const result = await server.call("POST", "/v1/store/orders", { headers: JSON_AUTH, body: `{"petId":1,"quantity":${quantity}}` })
    expect(expectError(result, 400, "invalid_request").message).toBe(message)
  })

  it("a pet has at most one open order: the second is 409 pet_not_available", async () => {
    const server = await seeded()
    expect((await place(server, 1)).status).toBe(201)
    expectError(await place(server, 1), 409, "pet_not_available", "pending")
  })

  it("answers 404 for a missing pet or order", async () => {
    const server = await seeded()
    expect(expectError(await place(server, 99), 404, "not_found").message).toBe("pet 99 not found")
    expect(expectError(await server.call("GET", "/v1/store/orders/7", { headers: AUTH }), 404, "not_found").message)
      .toBe("order 7 not found")
    expectError(await act(server, 7, "approve"), 404, "not_found", "order 7")
  })

  it.each([
    ["no petId", `{}`, "petId"],
    ["a fractional petId", `{"petId":1.5}`, "petId"],
    ["a string petId", `{"petId":"1"}`, "petId"],
    ["a petId beyond int64", `{"petId":9223372036854775808}`, "petId"],
    ["quantity 2", `{"petId":1,"quantity":2}`, "quantity"],
    ["quantity 1.0", `{"petId":1,"quantity":1.0}`, "quantity"],
    ["malformed JSON", `{"petId":`, ""]
  ])("refuses %s with 400 naming the field, storing nothing", async (_, body, field) => {
    const server = await seeded()
    const result = await server.call("POST", "/v1/store/orders", { headers: JSON_AUTH, body })
    expectError(result, 400, "invalid_request", field)
    expect(await petStatus(server, 1)).toBe("available")
  })

  it("needs a key before anything else, and a JSON body", async () => {
    const server = await seeded()
    expectError(await place(server, 1, { "content-type": "application/json" }), 401, "unauthorized")
    expectError(await server.call("GET", "/v1/store/orders"), 401, "unauthorized")
    expectError(await server.call("POST", "/v1/store/orders/1/approve"), 401, "unauthorized")
    expectError(await server.call("GET", "/v1/store/inventory"), 401, "unauthorized")
    expectError(await place(server, 1, AUTH), 415, "unsupported_media_type")
    expect(await petStatus(server, 1)).toBe("available")
  })

  it("lists orders in id order, by status and by pet, following Link rel=next across pages", async () => {
    const server = await seeded()
    for (const petId of [1, 2, 3]) await place(server, petId)
    await act(server, 2, "cancel")
    await place(server, 2) // order 4, for pet 2 again
    const all = await server.call("GET", "/v1/store/orders?limit=2", { headers: AUTH })
    expect((all.json as Array<OrderJson>).map((o) => o.id)).toEqual([1, 2])
    const next = all.headers.get("link")!.match(/^<([^>]+)>; rel="next"$/)![1]!
    const second = await server.call("GET", next, { headers: AUTH })
    expect((second.json as Array<OrderJson>).map((o) => o.id)).toEqual([3, 4])
    expect(second.headers.get("link")).toBeNull()
    const forPet2 = await server.call("GET", "/v1/store/orders?petId=2", { headers: AUTH })
    expect((forPet2.json as Array<OrderJson>).map((o) => [o.id, o.status])).toEqual([[2, "cancelled"], [4, "placed"]])
    const placed = await server.call("GET", "/v1/store/orders?status=placed&limit=1", { headers: AUTH })
    expect((placed.json as Array<OrderJson>).map((o) => o.id)).toEqual([1])
    expect(placed.headers.get("link")).toMatch(/status=placed/)
    expectError(await server.call("GET", "/v1/store/orders?status=lost", { headers: AUTH }), 400, "invalid_request", "status")
    expectError(await server.call("GET", "/v1/store/orders?petId=x", { headers: AUTH }), 400, "invalid_request", "petId")
    expectError(await server.call("GET", "/v1/store/orders?limit=0", { headers: AUTH }), 400, "invalid_request", "limit")
  })

  it("counts pets by status in the inventory, following the orders", async () => {
    const server = await seeded()
    expect(await inventory(server)).toEqual({ available: 3, pending: 1, sold: 1, none: 1 })
    await place(server, 1)
    await place(server, 2)
    await act(server, 2, "approve")
    await act(server, 2, "deliver")
    expect(await inventory(server)).toEqual({ available: 1, pending: 2, sold: 2, none: 1 })
  })

  it("keeps int64 pet ids exact", async () => {
    const server = freshServer()
    const result = await place(server, "9223372036854775807")
    expect(expectError(result, 404, "not_found").message).toBe("pet 9223372036854775807 not found")
  })
})
