/**
 * The OpenAPI document as a validator (openapi-backend, Ajv underneath): whether a
 * request is one the document allows, and whether a response is one it promises, for
 * the operation the request names. The document is the one the service serves, made
 * from the same Api.
 */
import addFormats from "ajv-formats"
import { OpenApi } from "effect/http-api"
import { OpenAPIBackend, SetMatchType } from "openapi-backend"
import { expect } from "vitest"
import { Api } from "../../../src/adapters/http/api/Api.ts"
import * as RouteTable from "../../../src/adapters/http/server/routing/RouteTable.ts"

/** The API's base path; the document's paths are relative to it. */
const BASE = "/v1"

const routes = RouteTable.make(Api, [])

let backend: Promise<OpenAPIBackend> | undefined

const validator = (): Promise<OpenAPIBackend> =>
  backend ??= new OpenAPIBackend({
    // As served: JSON text, so no object is shared between places (dereferencing rewrites them).
    definition: JSON.parse(JSON.stringify(OpenApi.fromApi(Api))) as never,
    apiRoot: BASE,
    // Its own check of the document knows OpenAPI 3.0 only; the linters (OpenApiLint.test.ts) check it as 3.1.
    quick: true,
    validate: true,
    ignoreTrailingSlashes: false,
    // Formats are rules too (date-time, int64): checked, not ignored.
    customizeAjv: (ajv) => addFormats.default(ajv)
  }).init()

/** What the document says about a request: its operation, if any, and whether it is valid. */
export interface RequestVerdict {
  readonly operationId: string | undefined
  readonly valid: boolean
  readonly errors: string
}

export interface ExchangeRequest {
  readonly method: string
  /** Path and query, as sent (`/v1/pets?limit=2`). */
  readonly url: string
  readonly headers?: Readonly<Record<string, string>> | undefined
  /** The parsed JSON body, if any. */
  readonly body?: unknown
}

const splitUrl = (url: string) => {
  const parsed = new URL(`http://localhost${url}`)
  const query: Record<string, string> = {}
  for (const [name, value] of parsed.searchParams) query[name] = value
  return { path: parsed.pathname, query }
}

/** Matches and validates a request against the document. */
export const checkRequest = async (request: ExchangeRequest): Promise<RequestVerdict> => {
  const api = await validator()
  const { path, query } = splitUrl(request.url)
  const req = { method: request.method.toLowerCase(), path, query, headers: { ...request.headers }, body: request.body }
  const operation = api.matchOperation(req)
  if (operation === undefined) return { operationId: undefined, valid: false, errors: "no such operation" }
  const result = api.validateRequest(req, operation)
  return { operationId: operation.operationId, valid: result.valid, errors: JSON.stringify(result.errors ?? []) }
}

/**
 * Asserts that the response is one the document promises for the request's operation:
 * a listed status, a body valid against that status's schema, and its headers valid
 * (required ones present). Requests that name no operation (unknown paths and methods)
 * have nothing to check.
 */
export const expectDocumentedResponse = async (
  request: ExchangeRequest,
  response: { readonly status: number; readonly headers: Headers; readonly text: string }
): Promise<void> => {
  const api = await validator()
  const { path } = splitUrl(request.url)
  // The operation the service's router serves the request with (it reads `/pets/;a=b` as
  // `/pets/`, and `/pets/%` as no route); other routes (/healthz …) are not in the document.
  const operationId = routes.match(request.method, path)?.operation
  const operation = operationId === undefined ? undefined : api.getOperation(operationId)
  if (operation === undefined) return
  const where = `${request.method} ${request.url} → ${response.status} ${response.text.slice(0, 300)}`
  const documented = Object.keys(operation.responses ?? {})
  expect(documented, `undocumented status: ${where}`).toContain(String(response.status))
  // A 204 has no body to validate, and must have none.
  if (response.status === 204) expect(response.text, `body: ${where}`).toBe("")
  // HEAD is the GET without its body: the status and headers are the GET's.
  else if (request.method !== "HEAD") {
    // An image is bytes of a documented type (a photo's rendition); only JSON bodies have a schema to meet.
    const type = response.headers.get("content-type") ?? ""
    if (type.startsWith("image/")) {
      const content = (operation.responses?.[String(response.status)] as { content?: Record<string, unknown> } | undefined)
        ?.content ?? {}
      expect(Object.keys(content), `content-type: ${request.method} ${request.url} → ${response.status}`).toContain(type)
    } else {
      const body: unknown = response.text === "" ? undefined : JSON.parse(response.text)
      const bodyResult = api.validateResponse(body, operation, response.status)
      expect(bodyResult.errors ?? [], `body: ${where}`).toEqual([])
    }
  }
  const headers: Record<string, string> = {}
  response.headers.forEach((value, name) => headers[name] = value)
  // "any": values are checked where present; openapi-backend has no notion of `required` headers, hence the check after.
  const headerResult = api.validateResponseHeaders(headers, operation, { statusCode: response.status, setMatchType: SetMatchType.Any })
  expect(headerResult.errors ?? [], `headers: ${where}`).toEqual([])
  const declared = Object.entries<{ readonly required?: boolean }>(
    (operation.responses?.[String(response.status)] as { headers?: Record<string, never> } | undefined)?.headers ?? {}
  )
  const missing = declared.filter(([name, header]) => header.required === true && headers[name.toLowerCase()] === undefined)
  expect(missing.map(([name]) => name), `required headers: ${where}`).toEqual([])
}
