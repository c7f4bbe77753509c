import { describe, expect, it } from "vitest"
import * as Fs from "node:fs"
import * as ApiErrors from "../../../src/adapters/http/api/ApiErrors.ts"

describe("ApiErrors", () => {
  const errors = [
    new ApiErrors.InvalidRequest({ message: "m" }),
    new ApiErrors.Unauthorized({ message: "m", invalidToken: false }),
    new ApiErrors.Forbidden({ message: "m" }),
    new ApiErrors.NotFound({ message: "m" }),
    new ApiErrors.MethodNotAllowed({ message: "m" }),
    new ApiErrors.RequestTimeout({ message: "m" }),
    new ApiErrors.Gone({ message: "m" }),
    new ApiErrors.CursorExpired({ message: "m" }),
    new ApiErrors.PetNotAvailableConflict({ message: "m" }),
    new ApiErrors.InvalidTransition({ message: "m" }),
    new ApiErrors.PetHasOpenOrderConflict({ message: "m" }),
    new ApiErrors.TooManyPhotosConflict({ message: "m" }),
    new ApiErrors.PreconditionFailed({ message: "m" }),
    new ApiErrors.IdempotencyKeyInUse({ message: "m" }),
    new ApiErrors.IdempotencyKeyReused({ message: "m" }),
    new ApiErrors.RateLimited({ message: "m" }),
    new ApiErrors.PayloadTooLarge({ message: "m" }),
    new ApiErrors.UnsupportedMediaType({ message: "m" }),
    new ApiErrors.ExpectationFailed({ message: "m" }),
    new ApiErrors.RequestHeaderFieldsTooLarge({ message: "m" }),
    new ApiErrors.Internal({ message: "m" }),
    new ApiErrors.ServiceUnavailable({ message: "m" })
  ]

  it("ERROR_CODES lists exactly the codes the error classes carry, each with the status of ERROR_STATUS", () => {
    expect(errors.map((error) => error.code).sort()).toEqual([...ApiErrors.ERROR_CODES].sort())
    for (const error of errors) expect(error.status).toBe(ApiErrors.ERROR_STATUS[error.code])
  })

  it("a status maps back to its code only where one code has it", () => {
    expect(ApiErrors.codeOfStatus(401)).toBe("unauthorized")
    expect(ApiErrors.codeOfStatus(503)).toBe("service_unavailable")
    // 409 is pet_not_available or invalid_transition: the body says which.
    expect(ApiErrors.codeOfStatus(409)).toBeUndefined()
    expect(ApiErrors.codeOfStatus(418)).toBeUndefined()
  })

  it("the README's error table documents exactly these codes, each with its status", () => {
    const readme = Fs.readFileSync(new URL("../../../README.md", import.meta.url), "utf8")
    const section = readme.slice(readme.indexOf("## Error codes"), readme.indexOf("\n## ", readme.indexOf("## Error codes") + 1))
    const rows = [...section.matchAll(/^\| (\d{3}) \| `([a-z_]+)` \|/gm)].map(([, status, code]) => `${status} ${code}`)
    expect(rows.sort()).toEqual(errors.map((error) => `${error.status} ${error.code}`).sort())
  })
})
