/**
 * Errors answered at the HTTP protocol level, by the node:http server itself rather
 * than by the application: requests Node's parser refuses (malformed request lines and
 * headers, unknown methods, oversized headers), requests that do not arrive in time,
 * and requests the server turns away before the application sees them. Each gets the
 * same `{code, message, status}` body as every other error.
 */
import type * as Http from "node:http"
import { STATUS_CODES } from "node:http"
import type { Socket } from "node:net"
import { InvalidRequest, PayloadTooLarge, RequestHeaderFieldsTooLarge, RequestTimeout } from "../../api/ApiErrors.ts"
import { CACHE_CONTROL, X_CONTENT_TYPE_OPTIONS } from "../policies/CommonHeaders.ts"
import { recordRejection } from "../policies/HttpMetrics.ts"
import { REQUEST_ID_HEADER, requestIdFor } from "../policies/RequestId.ts"

/** The Error body, which every ApiErrors class carries. */
export interface ErrorBody {
  readonly code: string
  readonly message: string
  readonly status: number
}

const bodyOf = (error: ErrorBody) => JSON.stringify({ code: error.code, message: error.message, status: error.status })

// After the answer and our FIN, how long a client may take to read it and close before the socket is destroyed.
const LINGER_MS = 2_000

/**
 * The Error for a node:http `clientError`, or `undefined` when it is a transport failure
 * (reset, broken pipe) that leaves nobody to answer. `headerLimit` is named in the 431.
 */
export const fromClientError = (
  error: Error & { readonly code?: string; readonly reason?: string },
  headerLimit: string
): ErrorBody | undefined => {
  switch (error.code) {
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return new RequestTimeout({ message: "the request did not arrive in time" })
    case "HPE_HEADER_OVERFLOW":
      return new RequestHeaderFieldsTooLarge({ message: `the request headers exceed ${headerLimit}` })
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return new PayloadTooLarge({ message: "the chunk extensions of the request body are too large" })
    default:
      // llhttp's reasons ("Invalid method encountered", "Invalid header value char") are fixed phrases, safe to show.
      return error.code?.startsWith("HPE_") === true
        ? new InvalidRequest({
          message: `malformed HTTP request${typeof error.reason === "string" ? `: ${error.reason}` : ""}`
        })
        : undefined
  }
}

/**
 * Answers through a node:http response the application has not touched, with the
 * request's id as the application would give it, and counts the refusal. Returns that id.
 */
export const send = (
  response: Http.ServerResponse,
  error: ErrorBody,
  headers: Readonly<Record<string, string>> = {}
): string => {
  const body = bodyOf(error)
  const requestId = requestIdFor(response.req.headers[REQUEST_ID_HEADER])
  recordRejection(error.status)
  response.writeHead(error.status, {
    ...headers,
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(body)),
    "x-content-type-options": X_CONTENT_TYPE_OPTIONS,
    "cache-control": CACHE_CONTROL,
    [REQUEST_ID_HEADER]: requestId
  })
  response.end(body)
  return requestId
}

/**
 * Ends a connection Node no longer frames responses on (after a parse error, or a
 * CONNECT): writes a whole HTTP/1.1 response with `Connection: close` straight to the
 * socket and closes it. Returns the request id it gave.
 */
export const sendOnSocket = (socket: Socket, error: ErrorBody): string => {
  const body = bodyOf(error)
  // Nothing of the request can be trusted here, its id included: a fresh one.
  const requestId = requestIdFor(undefined)
  recordRejection(error.status)
  endSoon(
    socket,
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? "Error"}\r\n` +
      `Content-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      `Connection: close\r\n` +
      `X-Content-Type-Options: ${X_CONTENT_TYPE_OPTIONS}\r\n` +
      `Cache-Control: ${CACHE_CONTROL}\r\n` +
      `X-Request-Id: ${requestId}\r\n` +
      `Date: ${new Date().toUTCString()}\r\n\r\n${body}`
  )
  return requestId
}

/**
 * Sends what is left and a FIN, then destroys the socket if the client has not closed
 * its side within a short linger (a half-closed socket is never reclaimed otherwise).
 */
export const endSoon = (socket: Socket, data?: string): void => {
  if (socket.destroyed) return
  const timer = setTimeout(() => socket.destroy(), LINGER_MS).unref()
  socket.once("close", () => clearTimeout(timer))
  if (data === undefined) socket.end()
  else socket.end(data)
}
