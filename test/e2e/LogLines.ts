/** The service's log lines as the e2e tests read them: pino's shape (src/adapters/observability/JsonLogLines.ts). */

/** pino's level numbers. */
export const INFO = 30
export const WARN = 40
export const ERROR = 50

/** A request's line, pino-http's fields. */
export interface RequestLine {
  readonly msg: "request completed"
  readonly level: number
  readonly time: number
  readonly pid: number
  readonly hostname: string
  readonly reqId: string
  readonly req: { readonly method: string; readonly url: string }
  readonly res: { readonly statusCode: number }
  readonly route: string
  readonly responseTime: number
  /** On a 5xx: the code and message of its Error body. */
  readonly err: { readonly type: string; readonly message: string }
}

export const isRequestLine = (line: Record<string, unknown>): line is Record<string, unknown> & RequestLine =>
  line["msg"] === "request completed"
