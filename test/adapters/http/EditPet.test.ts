/**
 * updatePet (PATCH, JSON Merge Patch) and deletePet (DELETE) over HTTP, in-process on the
 * memory store: the rules of a create, refused fields, ETag and If-Match, the orders'
 * ownership of the status, and what a retired pet leaves behind.
 */
import { describe, expect, it } from "vitest"
import { AUTH, createPet, expectError, freshServer, JSON_AUTH, listAll, type TestServer } from "./TestServer.ts"

const MERGE_PATCH = { ...AUTH, "content-type": "application/merge-patch+json" }

const patch = (server: TestServer, id: number | string, body: string, headers: Record<string, string> = {}) =>
  server.call("PATCH", `/v1/pets/${id}`, { body, headers: { ...MERGE_PATCH, ...headers } })

const remove = (server: TestServer, id: number | string, headers: Record<string, string> = {}) =>
  server.call("DELETE", `/v1/pets/${id}`, { headers: { ...AUTH, ...headers } })

const get = (server: TestServer, id: number) => server.call("GET", `/v1/pets/${id}`, { headers: AUTH })

const place = (server: TestServer, petId: number) =>
  server.call("POST", "/v1/store/orders", { headers: JSON_AUTH, body: `{"petId":${petId}}` })

const act = (server: TestServer, orderId: number, action: string) =>
  server.call("POST", `/v1/store/orders/${orderId}/${action}`, { headers: AUTH })

const inventory = async (server: TestServer) =>
  (await server.call("GET", "/v1/store/inventory", { headers: AUTH })).json as Record<string, number>

describe("PATCH /v1/pets/{petId} (updatePet)", () => {
  it("applies a merge patch and answers 200 with the pet after it and a new ETag, which get answers too", async () => {
    const server = freshServer()
    await createPet(server, { name: "Rex", categoryId: 9007199254740993, status: "available" })
    const before = (await get(server, 1)).headers.get("etag")
    expect(before).toBe(`"1"`)
    const patched = await patch(server, 1, `{"name":"Rex II","categoryId":-9223372036854775808}`)
    expect(patched.status).toBe(200)
    expect(patched.text).toBe(`{"id":1,"name":"Rex II","categoryId":-9223372036854775808,"status":"available","tags":[],"version":2}`)
    const etag = patched.headers.get("etag")
    expect(etag).toBe(`"2"`)
    expect(etag).not.toBe(before)
    const read = await get(server, 1)
    expect(read.text).toBe(patched.text)
    expect(read.headers.get("etag")).toBe(etag)
  })

  it("accepts application/json too, and refuses any other content type with 415 naming both", async () => {
    const server = freshServer()
    await createPet(server, { name: "Rex", categoryId: 1 })
    expect((await patch(server, 1, `{"name":"Tom"}`, { "content-type": "application/json; charset=utf-8" })).status).toBe(200)
    for (const contentType of ["text/plain", "application/merge-patch+jsonx", "application/x-www-form-urlencoded"]) {
      expectError(await patch(server, 1, `{"name":"Zed"}`, { "content-type": contentType }), 415, "unsupported_media_type",
        "application/merge-patch+json", "application/json")
    }
    expectError(await server.call("PATCH", "/v1/pets/1", { body: `{"name":"Zed"}`, headers: AUTH }), 415, "unsupported_media_type")
    // createPet still takes only application/json.
    expectError(
      await server.call("POST", "/v1/pets", { body: `{"name":"Zed","categoryId":1}`, headers: MERGE_PATCH }),
      415,
      "unsupported_media_type"
    )
    expect((await get(server, 1)).json).toMatchObject({ name: "Tom" })
  })

  it("null removes the status; an absent field stays; an empty patch changes nothing but the version", async () => {
    const server = freshServer()
    await createPet(server, { name: "Rex", categoryId: 3, status: "sold" })
    expect((await patch(server, 1, `{"status":null}`)).text).toBe(`{"id":1,"name":"Rex","categoryId":3,"tags":[],"version":2}`)
    expect((await patch(server, 1, `{"status":"pending"}`)).text).toBe(`{"id":1,"name":"Rex","categoryId":3,"status":"pending","tags":[],"version":3}`)
    const empty = await patch(server, 1, `{}`)
    expect(empty.text).toBe(`{"id":1,"name":"Rex","categoryId":3,"status":"pending","tags":[],"version":4}`)
    expect(empty.headers.get("etag")).toBe(`"4"`)
  })

  it.each([
    [`{"id":2}`, "id"],
    [`{"name":"Tom","owner":"me"}`, "owner"],
    [`{"name":"   "}`, "name"],
    [`{"name":null}`, "name"],
    [`{"name":""}`, "name"],
    [`{"categoryId":9223372036854775808}`, "categoryId"],
    [`{"categoryId":null}`, "categoryId"],
    [`{"status":"lost"}`, "status"],
    [`[]`, "body"],
    [`"Tom"`, "body"],
    [`null`, "body"],
    [`{`, "body"]
  ])("refuses %s with 400 naming %s, and changes nothing", async (body, field) => {
    const server = freshServer()
    await createPet(server, { name: "Rex", categoryId: 1 })
    const before = await get(server, 1)
    expectError(await patch(server, 1, body), 400, "invalid_request", field)
    const after = await get(server, 1)
    expect(after.text).toBe(before.text)
    expect(after.headers.get("etag")).toBe(before.headers.get("etag"))
  })

  it("answers 404 for a pet that does not exist, 400 for an id that is not one", async () => {
    const server = freshServer()
    expectError(await patch(server, 7, `{"name":"Tom"}`), 404, "not_found", "7")
    expectError(await patch(server, "x", `{"name":"Tom"}`), 400, "invalid_request", "petId")
  })
})

describe("If-Match on PATCH and DELETE", () => {
  it("applies the change when the ETag is current, or *, and answers 412 precondition_failed when the pet changed", async () => {
    const server = freshServer()
    await createPet(server, { name: "Rex", categoryId: 1 })
    const first = (await get(server, 1)).headers.get("etag")!
    const second = await patch(server, 1, `{"name":"Tom"}`, { "if-match": first })
    expect(second.status).toBe(200)
    expectError(await patch(server, 1, `{"name":"Zed"}`, { "if-match": first }), 412, "precondition_failed", "If-Match")
    expectError(await remove(server, 1, { "if-match": first }), 412, "precondition_failed")
    // Weak and foreign tags never match (strong comparison); a list matches if one of them does.
    expectError(await patch(server, 1, `{"name":"Zed"}`, { "if-match": `W/${second.headers.get("etag")}` }), 412, "precondition_failed")
    expectError(await patch(server, 1, `{"name":"Zed"}`, { "if-match": `"abc"` }), 412, "precondition_failed")
    expect((await get(server, 1)).json).toMatchObject({ name: "Tom" })
    const listed = await patch(server, 1, `{"name":"Ann"}`, { "if-match": `"99", ${second.headers.get("etag")}` })
    expect(listed.status).toBe(200)
    expect((await patch(server, 1, `{"name":"Bob"}`, { "if-match": "*" })).status).toBe(200)
    expect((await remove(server, 1, { "if-match": (await get(server, 1)).headers.get("etag")! })).status).toBe(204)
  })

  it("the ETag changes when an order changes the pet's status", async () => {
    const server = freshServer()
    await createPet(server, { name: "Rex", categoryId: 1, status: "available" })
    const tags = [(await get(server, 1)).headers.get("etag")]
    expect((await place(server, 1)).status).toBe(201)
    tags.push((await get(server, 1)).headers.get("etag"))
    expect((await act(server, 1, "cancel")).status).toBe(200)
    tags.push((await get(server, 1)).headers.get("etag"))
    expect(new Set(tags).size).toBe(3)
    expectError(await patch(server, 1, `{"name":"Tom"}`, { "if-match": tags[0]! }), 412, "precondition_failed")
  })
})

describe("orders own the status while one is open", () => {
  it("a status patch or a delete is 409 pet_has_open_order; other fields may change; after the order closes both work", async () => {
    const server = freshServer()
    await createPet(server, { name: "Rex", categoryId: 1, status: "available" })
    expect((await place(server, 1)).status).toBe(201)
    expectError(await patch(server, 1, `{"status":"available"}`), 409, "pet_has_open_order", "order")
    expectError(await patch(server, 1, `{"status":null}`), 409, "pet_has_open_order")
    expectError(await remove(server, 1), 409, "pet_has_open_order")
    expect((await act(server, 1, "approve")).status).toBe(200)
    expectError(await patch(server, 1, `{"name":"Tom","status":"sold"}`), 409, "pet_has_open_order")
    expect((await get(server, 1)).json).toMatchObject({ name: "Rex", status: "pending" })
    expect((await patch(server, 1, `{"name":"Tom"}`)).json).toMatchObject({ name: "Tom", status: "pending" })
    expect((await act(server, 1, "cancel")).status).toBe(200)
    expect((await patch(server, 1, `{"status":"sold"}`)).json).toMatchObject({ status: "sold" })
    expect((await remove(server, 1)).status).toBe(204)
  })
})

describe("DELETE /v1/pets/{petId} (deletePet)", () => {
  it("answers 204; the pet is then 404, in no list and no count, and cannot be ordered; its orders stay readable", async () => {
    const server = freshServer()
    await createPet(server, { name: "Rex", categoryId: 1, status: "available" })
    await createPet(server, { name: "Tom", categoryId: 1, status: "available" })
    expect((await place(server, 1)).status).toBe(201)
    expect((await act(server, 1, "approve")).status).toBe(200)
    expect((await act(server, 1, "deliver")).status).toBe(200)
    const countsBefore = await inventory(server)
    const deleted = await remove(server, 1)
    expect(deleted.status).toBe(204)
    expect(deleted.text).toBe("")
    expectError(await get(server, 1), 404, "not_found")
    expect(await listAll(server)).toBe(`[{"id":2,"name":"Tom","categoryId":1,"status":"available","tags":[],"version":1}]`)
    const sold = await server.call("GET", "/v1/pets?status=sold", { headers: AUTH })
    expect(sold.text).toBe("[]")
    expect(await inventory(server)).toEqual({ ...countsBefore, sold: countsBefore["sold"]! - 1 })
    expectError(await place(server, 1), 404, "not_found")
    expect((await server.call("GET", "/v1/store/orders/1", { headers: AUTH })).json).toMatchObject({ petId: 1, status: "delivered" })
    expectError(await remove(server, 1), 404, "not_found")
    expectError(await patch(server, 1, `{"name":"Ghost"}`), 404, "not_found")
  })
})

describe("ETag on create", () => {
  it("a create answers its ETag, and an idempotent replay answers the same", async () => {
    const server = freshServer()
    const headers = { ...JSON_AUTH, "idempotency-key": "edit-pet-1" }
    const body = `{"name":"Rex","categoryId":1}`
    const first = await server.call("POST", "/v1/pets", { body, headers })
    expect(first.headers.get("etag")).toBe(`"1"`)
    const replay = await server.call("POST", "/v1/pets", { body, headers })
    expect(replay.headers.get("idempotent-replayed")).toBe("true")
    expect(replay.headers.get("etag")).toBe(`"1"`)
  })

  it("tags: a patch replaces the list whole, [] removes it, an absent key keeps it; a bad list is 400 and changes nothing", async () => {
    const server = freshServer()
    await createPet(server, { name: "Rex", categoryId: 3, tags: ["dog", "young"] })
    expect((await patch(server, 1, `{"name":"Rex II"}`)).text)
      .toBe(`{"id":1,"name":"Rex II","categoryId":3,"tags":["dog","young"],"version":2}`)
    expect((await patch(server, 1, `{"tags":["old","dog"]}`)).text)
      .toBe(`{"id":1,"name":"Rex II","categoryId":3,"tags":["old","dog"],"version":3}`)
    for (const refused of [`{"tags":["Dog"]}`, `{"tags":["dog","dog"]}`, `{"tags":null}`, `{"tags":"dog"}`]) {
      expectError(await patch(server, 1, refused), 400, "invalid_request", "tags")
    }
    expect((await get(server, 1)).text).toBe(`{"id":1,"name":"Rex II","categoryId":3,"tags":["old","dog"],"version":3}`)
    expect((await patch(server, 1, `{"tags":[]}`)).text).toBe(`{"id":1,"name":"Rex II","categoryId":3,"tags":[],"version":4}`)
  })
})
