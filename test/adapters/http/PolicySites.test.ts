/**
 * Each policy of the HTTP adapter is written once: one place checks a key's scope, one
 * checks the content type, one maps domain errors to answers, and one router serves every
 * /v1 operation. A second copy of any of them (a second serving path) fails here.
 */
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"

const ROOT = join(import.meta.dirname, "../../../src/adapters/http")

const sources = (directory: string): ReadonlyArray<{ readonly file: string; readonly code: string }> =>
  readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name)
    if (entry.isDirectory()) return sources(path)
    if (!entry.name.endsWith(".ts")) return []
    // Code only: comments may name a policy without applying it.
    const code = readFileSync(path, "utf8").split("\n")
      .filter((line) => !/^\s*(\*|\/\*\*|\/\/)/.test(line))
      .join("\n")
    return [{ file: entry.name, code }]
  })

const sites = (pattern: RegExp): ReadonlyArray<string> =>
  sources(ROOT).flatMap(({ code, file }) => [...code.matchAll(pattern)].map(() => file))

describe("src/adapters/http", () => {
  it("checks a key's scope in exactly one place", () => {
    expect(sites(/\ballows\(/g)).toEqual(["ApiRouter.ts"])
  })

  it("checks the content type in exactly one place", () => {
    expect(sites(/\bisJsonContentType\(/g)).toEqual(["ApiRouter.ts"])
  })

  it("maps domain errors to answers in exactly one place", () => {
    expect(sites(/\bconst toHttpError\b/g)).toEqual(["HttpErrors.ts"])
    // The answers of the scope, signed URL and idempotency refusals are made there only.
    expect(sites(/new (Forbidden|IdempotencyKeyReused|IdempotencyKeyInUse|InvalidTransition)\(/g)).toEqual(
      Array(5).fill("HttpErrors.ts")
    )
  })

  it("serves the /v1 operations through one router", () => {
    expect(sites(/HttpApiBuilder\.(group|layer)\(/g)).toEqual([])
    expect(sites(/HttpApi\.reflect\(Api\b/g)).toEqual(["ApiRouter.ts"])
  })
})
