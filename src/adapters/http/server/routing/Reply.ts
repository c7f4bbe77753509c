import type { Stream } from "effect"

/**
 * What an operation's handler answers: a status and the JSON text of its body (or bytes
 * of another type), plus response headers (`Location`, `Link`, `ETag`). Plain data rather
 * than a response, so that the idempotent creates can keep it and send it again byte for byte.
 */
export interface Reply {
  readonly status: number
  readonly body: string
  readonly headers?: Readonly<Record<string, string>> | undefined
  /** A body streamed for as long as the client stays (Server-Sent Events), instead of `body`. */
  readonly eventStream?: Stream.Stream<Uint8Array> | undefined
  /** Bytes of `contentType` instead of JSON text (a photo's image); never kept for replay. */
  readonly bytes?: Uint8Array | undefined
  readonly contentType?: string | undefined
}

/** A 200 with `body`, and `headers` when given. */
export const ok = (body: string, headers?: Readonly<Record<string, string>>): Reply => ({ status: 200, body, headers })

/** A 201 with `body`, the created resource's `Location`, and `headers` when given. */
export const created = (body: string, location: string, headers?: Readonly<Record<string, string>>): Reply => ({
  status: 201,
  body,
  headers: { location, ...headers }
})

/** A 204: no body. */
export const noContent: Reply = { status: 204, body: "" }
/** A 200 that streams Server-Sent Events until the client leaves (never kept for replay). */
export const eventStream = (events: Stream.Stream<Uint8Array>): Reply => ({ status: 200, body: "", eventStream: events })
