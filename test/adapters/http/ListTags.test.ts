import { describe, expect, it } from "vitest"
import { AUTH, createPet, expectError, freshServer, JSON_AUTH, type TestServer } from "./TestServer.ts"

const tags = (server: TestServer, query = "") => server.call("GET", `/v1/tags${query}`, { headers: AUTH })

describe("GET /v1/tags (listTags)", () => {
  it("lists the tags in use in byte order with how many pets carry each; retired and untagged pets count nowhere", async () => {
    const server = freshServer()
    expect((await tags(server)).text).toBe("[]")
    await createPet(server, { name: "Rex", categoryId: 1, tags: ["young", "dog"] })
    await createPet(server, { name: "Kit", categoryId: 1, tags: ["young", "cat", "a-1", "a1"] })
    await createPet(server, { name: "Tom", categoryId: 1 })
    const result = await tags(server)
    expect(result.status).toBe(200)
    expect(result.headers.get("content-type")).toBe("application/json")
    expect(result.text).toBe(
      `[{"tag":"a-1","pets":1},{"tag":"a1","pets":1},{"tag":"cat","pets":1},{"tag":"dog","pets":1},{"tag":"young","pets":2}]`
    )
    expect((await server.call("DELETE", "/v1/pets/2", { headers: AUTH })).status).toBe(204)
    await server.call("PATCH", "/v1/pets/1", { body: `{"tags":["dog"]}`, headers: JSON_AUTH })
    expect((await tags(server)).text).toBe(`[{"tag":"dog","pets":1}]`)
  })

  it("pages with limit and a Link whose cursor continues after the last tag", async () => {
    const server = freshServer()
    await createPet(server, { name: "Rex", categoryId: 1, tags: ["e", "d", "c", "b", "a"] })
    const first = await tags(server, "?limit=2")
    expect(first.text).toBe(`[{"tag":"a","pets":1},{"tag":"b","pets":1}]`)
    const link = /^<(\/v1\/tags\?[^>]+)>; rel="next"$/.exec(first.headers.get("link") ?? "")
    expect(link).not.toBeNull()
    const second = await server.call("GET", link![1]!, { headers: AUTH })
    expect(second.text).toBe(`[{"tag":"c","pets":1},{"tag":"d","pets":1}]`)
    const cursor = new URLSearchParams(link![1]!.split("?")[1]).get("cursor")!
    expectError(await tags(server, `?cursor=${cursor}!`), 400, "invalid_request", "cursor")
    expectError(await tags(server, "?cursor=not-a-cursor"), 400, "invalid_request", "cursor")
    expectError(await tags(server, `?cursor=${Buffer.from("tag:Bad").toString("base64url")}`), 400, "invalid_request", "cursor")
    expectError(await tags(server, "?limit=0"), 400, "invalid_request", "limit")
  })

  it("needs a key", async () => {
    const server = freshServer()
    expectError(await server.call("GET", "/v1/tags"), 401, "unauthorized")
  })
})
