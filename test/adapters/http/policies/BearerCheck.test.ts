import { assert, describe, it } from "@effect/vitest"
import { Effect, Redacted, Schema } from "effect"
import { HttpServerRequest } from "effect/http"
import { HttpApiBuilder, HttpApiSecurity } from "effect/http-api"
import { bearerCredential } from "../../../../src/adapters/http/server/policies/BearerCheck.ts"

// What HttpApiSecurity.bearer reads from the same field: the credential, or "" for none.
const frameworkDecode = HttpApiBuilder.securityDecode(HttpApiSecurity.bearer)
const framework = (field: string): string =>
  Redacted.value(Effect.runSync(frameworkDecode.pipe(
    Effect.provideService(
      HttpServerRequest.HttpServerRequest,
      { headers: { authorization: field } } as unknown as HttpServerRequest.HttpServerRequest
    ),
    Effect.provideService(HttpServerRequest.ParsedSearchParams, {})
  )))

// Fields near the scheme's edges: its case, a missing or doubled space, other schemes.
const Field = Schema.Tuple([
  Schema.Literals(["Bearer", "bearer", "BEARER", "bEaReR", "Bearerx", "Bear", "Basic", "", " Bearer"]),
  Schema.Literals(["", " ", "  ", "\t", " \t"]),
  Schema.String
])

describe("bearerCredential", () => {
  it.prop("reads a field as HttpApiSecurity.bearer does", [Field], ([[scheme, gap, rest]]) => {
    const field = `${scheme}${gap}${rest}`
    assert.strictEqual(bearerCredential(field) ?? "", framework(field), JSON.stringify(field))
  }, { arbitrary: { runs: 2000 } })

  it("reads the credential after the scheme, in any case, past the spaces", () => {
    assert.strictEqual(bearerCredential("Bearer abc"), "abc")
    assert.strictEqual(bearerCredential("bearer   abc def"), "abc def")
    assert.strictEqual(bearerCredential("BEARER x"), "x")
  })

  it("reads no credential from another scheme, a missing space or an empty credential", () => {
    for (const field of ["Basic abc", "Bearerabc", "Bearer", "Bearer ", "Bearer    ", "Bearer\tabc", ""]) {
      assert.strictEqual(bearerCredential(field), undefined, JSON.stringify(field))
    }
  })
})
