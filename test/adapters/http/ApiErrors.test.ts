import { describe, expect, it } from "vitest"
import * as ApiErrors from "../../../src/adapters/http/api/ApiErrors.ts"

describe("ApiErrors", () => {
  it("ERROR_CODES lists exactly the codes the error classes carry, each with its own status", () => {
    const errors = [
      new ApiErrors.InvalidRequest({ message: "m" }),
      new ApiErrors.Unauthorized({ message: "m", invalidToken: false }),
      new ApiErrors.NotFound({ message: "m" }),
      new ApiErrors.MethodNotAllowed({ message: "m" }),
      new ApiErrors.Gone({ message: "m" }),
      new ApiErrors.PayloadTooLarge({ message: "m" }),
      new ApiErrors.UnsupportedMediaType({ message: "m" }),
      new ApiErrors.Internal({ message: "m" }),
      new ApiErrors.ServiceUnavailable({ message: "m" })
    ]
    expect(errors.map((error) => error.code).sort()).toEqual([...ApiErrors.ERROR_CODES].sort())
    expect(new Set(errors.map((error) => error.status)).size).toBe(errors.length)
  })
})
