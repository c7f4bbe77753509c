/**
 * A real local webhook receiver for process tests: an HTTP server on 127.0.0.1 that
 * records every delivery and answers by path: `/ok` 204, `/fail` 500, `/slow` 204 after
 * 6 s (beyond the sender's 5 s), `/gone` 410, `/hold` only once {@link Receiver.answerHeld}
 * is called (then 204, and 204 at once from then on).
 */
import { createServer, type IncomingHttpHeaders } from "node:http"
import type { AddressInfo } from "node:net"
import { Webhook } from "standardwebhooks"

export interface Received {
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: string
  readonly at: number
}

export interface Receiver {
  readonly url: (path: string) => string
  readonly received: Array<Received>
  readonly to: (path: string) => Array<Received>
  /** Answers the held requests with 204, and every later one on `/hold` at once. */
  readonly answerHeld: () => void
  readonly close: () => Promise<void>
}

export const startReceiver = async (): Promise<Receiver> => {
  const received: Array<Received> = []
  const held: Array<() => void> = []
  let holding = true
  const server = createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      const path = request.url ?? "/"
      received.push({ path, headers: request.headers, body: Buffer.concat(chunks).toString("utf8"), at: Date.now() })
      const answer = (status: number) => response.writeHead(status).end()
      if (path === "/ok") answer(204)
      else if (path === "/fail") answer(500)
      else if (path === "/slow") setTimeout(() => answer(204), 6_000).unref()
      else if (path === "/gone") answer(410)
      else if (path === "/hold" && holding) held.push(() => answer(204))
      else answer(204)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    received,
    to: (path) => received.filter((delivery) => delivery.path === path),
    answerHeld: () => {
      holding = false
      for (const answer of held.splice(0)) answer()
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

/** The delivery's payload, after checking its signature as a receiver would (throws if forged). */
export const verified = (delivery: Received, secret: string): { type: string; timestamp: string; data: Record<string, unknown> } =>
  new Webhook(secret).verify(delivery.body, {
    "webhook-id": String(delivery.headers["webhook-id"]),
    "webhook-timestamp": String(delivery.headers["webhook-timestamp"]),
    "webhook-signature": String(delivery.headers["webhook-signature"])
  }) as never
