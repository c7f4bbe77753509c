/**
 * GET /v1/events over HTTP, in-process on the memory store: keyset pages in commit order,
 * the type filter, limits, and 410 cursor_expired once retention has swept past a cursor.
 */
import { Context, DateTime, Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { describe, expect, it } from "vitest"
import * as EventRetention from "../../../src/application/events/EventRetention.ts"
import * as EventLogMemory from "../../../src/adapters/memory/events/EventLogMemory.ts"
import { EventTable } from "../../../src/adapters/memory/events/EventTable.ts"
import * as OrderRepositoryMemory from "../../../src/adapters/memory/orders/OrderRepositoryMemory.ts"
import { OrderTable } from "../../../src/adapters/memory/orders/OrderTable.ts"
import * as PetRepositoryMemory from "../../../src/adapters/memory/pets/PetRepositoryMemory.ts"
import { PetTable } from "../../../src/adapters/memory/pets/PetTable.ts"
import { wantsEventStream } from "../../../src/adapters/http/server/events/EventHandlers.ts"
import { EventLog } from "../../../src/ports/events/EventLog.ts"
import { OrderRepository } from "../../../src/ports/orders/OrderRepository.ts"
import { PetRepository } from "../../../src/ports/pets/PetRepository.ts"
import { AUTH, createPet, expectError, freshServer, JSON_AUTH } from "./TestServer.ts"

// A memory store whose event table the test can reach, to sweep it.
const storeWithEvents = () => {
  const pets = new PetTable()
  const events = new EventTable()
  const log = EventLogMemory.fromTable(events)
  const layer = Layer.succeedContext(
    Context.make(PetRepository, PetRepositoryMemory.fromTables(pets, events)).pipe(
      Context.add(OrderRepository, OrderRepositoryMemory.fromTables(pets, new OrderTable(), events)),
      Context.add(EventLog, log)
    )
  )
  return { layer, log }
}

interface EventJson {
  readonly id: number
  readonly type: string
  readonly occurredAt: string
  readonly data: { readonly id: number }
}

describe("GET /v1/events (listEvents)", () => {
  it("answers the stream only to an Accept that names text/event-stream exactly, with a weight above 0", async () => {
    expect(wantsEventStream("text/event-stream")).toBe(true)
    expect(wantsEventStream("TEXT/Event-Stream; charset=utf-8")).toBe(true)
    expect(wantsEventStream("application/json, text/event-stream;q=0.5")).toBe(true)
    for (const accept of [undefined, "", "*/*", "text/*", "text/event-stream-nope", "text/event-streams", "x-text/event-stream", "text/event-stream;q=0", "text/event-stream; q=0.0"]) {
      expect(wantsEventStream(accept), String(accept)).toBe(false)
    }
    const server = freshServer()
    await createPet(server, { name: "one", categoryId: 1, status: "available" })
    for (const accept of ["text/event-stream-nope", "text/event-stream;q=0", "*/*"]) {
      const answer = await server.call("GET", "/v1/events", { headers: { ...AUTH, accept } })
      expect(answer.status, accept).toBe(200)
      expect((answer.json as Array<EventJson>).map((event) => event.type), accept).toEqual(["pet.created"])
    }
  })

  it("pages the changes in order with Link next (after=<last id>), keeps the type filter, and refuses bad input", async () => {
    const server = freshServer()
    const pets = []
    for (let i = 0; i < 5; i++) pets.push(await createPet(server, { name: `pet ${i}`, categoryId: i, status: "available" }))
    // A create with an int64 past 2^53, sent as text so that no JavaScript number rounds it.
    const big = await server.call("POST", "/v1/pets", { headers: JSON_AUTH, body: `{"name":"big","categoryId":9007199254740993}` })
    expect(big.status).toBe(201)
    const placed = await server.call("POST", "/v1/store/orders", { headers: JSON_AUTH, body: `{"petId":${pets[0]!.id}}` })
    expect(placed.status).toBe(201)

    const first = await server.call("GET", "/v1/events?limit=4", { headers: AUTH })
    expect(first.status).toBe(200)
    const page = first.json as Array<EventJson>
    expect(page.map((event) => event.type)).toEqual(["pet.created", "pet.created", "pet.created", "pet.created"])
    expect(page.map((event) => event.id)).toEqual([1, 2, 3, 4])
    expect(first.headers.get("link")).toBe(`</v1/events?limit=4&after=4>; rel="next"`)
    const second = await server.call("GET", "/v1/events?limit=4&after=4", { headers: AUTH })
    // The order's event, then its pet's: pending now.
    expect((second.json as Array<EventJson>).map((event) => [event.id, event.type])).toEqual([
      [5, "pet.created"],
      [6, "pet.created"],
      [7, "order.placed"],
      [8, "pet.updated"]
    ])
    const ordered = await server.call("GET", `/v1/pets/${pets[0]!.id}`, { headers: AUTH })
    expect(ordered.json).toEqual({ id: pets[0]!.id, name: "pet 0", categoryId: 0, status: "pending", tags: [], version: 2 })
    expect((second.json as Array<EventJson>)[3]!.data).toEqual({ ...(ordered.json as object), changed: ["status"] })
    expect(second.headers.get("link")).toBeNull()
    // int64 exact in the body: the digits as written, not rounded.
    expect(second.text).toContain(`"categoryId":9007199254740993`)

    const typed = await server.call("GET", "/v1/events?type=order.placed&type=pet.created&limit=5", { headers: AUTH })
    expect(typed.headers.get("link")).toBe(`</v1/events?limit=5&type=order.placed&type=pet.created&after=5>; rel="next"`)
    const orders = await server.call("GET", "/v1/events?type=order.placed", { headers: AUTH })
    expect((orders.json as Array<EventJson>).map((event) => event.id)).toEqual([7])

    expectError(await server.call("GET", "/v1/events?type=pet.eaten", { headers: AUTH }), 400, "invalid_request", "type")
    expectError(await server.call("GET", "/v1/events?after=-1", { headers: AUTH }), 400, "invalid_request", "after")
    expectError(await server.call("GET", "/v1/events?limit=0", { headers: AUTH }), 400, "invalid_request", "limit")
    expectError(await server.call("GET", "/v1/events"), 401, "unauthorized")
  })

  it("answers 410 cursor_expired for an after older than retention, and pages on from a kept cursor", async () => {
    const { layer, log } = storeWithEvents()
    const server = freshServer(layer)
    for (let i = 0; i < 4; i++) await createPet(server, { name: `pet ${i}`, categoryId: 1 })
    // Retention by the Clock: a week later, with 7 days kept, all four are swept, two at a time.
    const removed = await Effect.runPromise(Effect.gen(function*() {
      yield* TestClock.setTime(DateTime.toEpochMillis(DateTime.makeUnsafe(Date.now())) + 8 * 24 * 3600 * 1000)
      return yield* EventRetention.sweep({ retention: "7 days", batch: 2 })
    }).pipe(Effect.provideService(EventLog, log), Effect.provide(TestClock.layer())))
    expect(removed).toBe(4)
    await createPet(server, { name: "after the sweep", categoryId: 1 })

    const expired = await server.call("GET", "/v1/events?after=2", { headers: AUTH })
    expectError(expired, 410, "cursor_expired", "after 2")
    const sse = await server.call("GET", "/v1/events", { headers: { ...AUTH, accept: "text/event-stream", "last-event-id": "3" } })
    expectError(sse, 410, "cursor_expired")
    // The last swept id is a valid cursor: nothing after it was lost.
    const kept = await server.call("GET", "/v1/events?after=4", { headers: AUTH })
    expect((kept.json as Array<EventJson>).map((event) => event.id)).toEqual([5])
    // Without after: from the oldest kept.
    expect(((await server.call("GET", "/v1/events", { headers: AUTH })).json as Array<EventJson>).map((event) => event.id)).toEqual([5])
  })
})
