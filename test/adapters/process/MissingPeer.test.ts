/**
 * The missing-peer hint: which optional peer a failed load names, through a chain of
 * causes, and the list of optional peers as package.json states it.
 */
import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import * as MissingPeer from "../../../src/adapters/process/MissingPeer.ts"

/** What Node throws for a package it cannot find, as `import` does. */
const notFound = async (specifier: string): Promise<unknown> => import(specifier).then(() => undefined, (error: unknown) => error)

/** Node's error for a missing peer, as a consumer without it would get it. */
const asNodeWouldSay = (name: string) =>
  Object.assign(new Error(`Cannot find package '${name}' imported from /app/node_modules/animal-store/dist/x.js`), {
    code: "ERR_MODULE_NOT_FOUND"
  })

describe("MissingPeer", () => {
  it("reads the optional peers from the package's package.json", () => {
    const manifest = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as {
      readonly peerDependenciesMeta: Record<string, { readonly optional?: boolean }>
    }
    const optional = Object.entries(manifest.peerDependenciesMeta).filter(([, meta]) => meta.optional === true)
    expect([...MissingPeer.optionalPeers()].sort()).toEqual(optional.map(([name]) => name).sort())
    expect(MissingPeer.optionalPeers()).toEqual(
      expect.arrayContaining(["@effect/platform-node", "@effect/sql-pg", "@electric-sql/pglite", "redis"])
    )
  })

  it("names the peer a failed load reports, itself or as a cause, scoped names and subpaths included", () => {
    expect(MissingPeer.missingPeerIn(asNodeWouldSay("redis"))).toBe("redis")
    const subpath = Object.assign(
      new Error("Cannot find package '@effect/platform-node' imported from /app/node_modules/animal-store/dist/main.js"),
      { code: "ERR_MODULE_NOT_FOUND" }
    )
    expect(MissingPeer.missingPeerIn(subpath)).toBe("@effect/platform-node")
    const wrapped = MissingPeer.missingPeer("animal-store/embedded", "@effect/sql-pg", asNodeWouldSay("@effect/sql-pg"))
    expect(MissingPeer.missingPeerIn(new Error("opening failed", { cause: wrapped }))).toBe("@effect/sql-pg")
    expect(wrapped.message).toBe(
      "animal-store/embedded: the package @effect/sql-pg is not installed (an optional peer dependency of animal-store); " +
        "install it: npm install @effect/sql-pg"
    )
  })

  it("names nothing for another package, another error, or a module of the package itself", async () => {
    const other = await notFound("no-such-package-of-animal-store")
    expect(other).toMatchObject({ code: "ERR_MODULE_NOT_FOUND" })
    expect(MissingPeer.missingPeerIn(other)).toBeUndefined()
    expect(MissingPeer.missingPeerIn(new Error("Cannot find package 'redis'"))).toBeUndefined()
    expect(MissingPeer.missingPeerIn(await notFound("./no-such-module.js"))).toBeUndefined()
    expect(MissingPeer.missingPeerIn("redis")).toBeUndefined()
  })
})
