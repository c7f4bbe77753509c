/**
 * The webhooks section: what a dispatcher delivering to one subscription costs the
 * writes. On PostgreSQL and embedded, 10 concurrent clients create a pet, place an order
 * for it and approve the order over HTTP, for a few seconds, in rounds without and with a
 * subscription to every event type (a local receiver answering 204), interleaved (ABAB).
 * Both rounds write every change's event: the outbox write itself, issue 23's target, is
 * the outbox section's (outbox.ts).
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { fmt, fmtRatio, HOST, median, sleep, stopChild } from "./lib.ts"
import { createDatabase, dropDatabase } from "./pg-admin.ts"
import type { Report } from "./report.ts"
import { startService } from "./servers.ts"

const CLIENTS = 10
const TYPES = ["pet.created", "pet.updated", "pet.deleted", "order.placed", "order.approved", "order.delivered", "order.cancelled"]

export interface WebhooksRow {
  readonly store: string
  readonly withoutPerSec: number
  readonly withPerSec: number
  readonly ratio: number
  readonly delivered: number
}

const receiver = async () => {
  let received = 0
  const server = createServer((request, response) => {
    request.resume()
    request.on("end", () => {
      received++
      response.writeHead(204).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, HOST, resolve))
  return {
    url: `http://${HOST}:${(server.address() as AddressInfo).port}/hook`,
    received: () => received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

export const webhooksSection = async (options: {
  readonly report: Report
  readonly work: string
  readonly apiKey: string
  readonly pgUrl: string | undefined
  readonly seconds?: number
  readonly rounds?: number
}): Promise<ReadonlyArray<WebhooksRow>> => {
  const seconds = options.seconds ?? 5
  const rounds = options.rounds ?? 2
  options.report.heading(
    `Webhooks: create + place + approve over HTTP, ${CLIENTS} clients, without and with one subscription (the dispatcher's cost)`
  )
  const rows: Array<WebhooksRow> = []
  const stores: Array<readonly [string, () => Promise<{ env: Record<string, string>; done: () => Promise<void> }>]> = [
    ["embedded", async () => ({ env: { STORE: "embedded", DATA_DIR: join(options.work, "webhooks-pglite") }, done: async () => {} })]
  ]
  if (options.pgUrl !== undefined) {
    const pgUrl = options.pgUrl
    stores.unshift(["postgres", async () => {
      const db = await createDatabase(pgUrl, "webhooks")
      return { env: { STORE: "postgres", DATABASE_URL: db.url }, done: () => dropDatabase(pgUrl, db.name) }
    }])
  }
  for (const [store, prepare] of stores) {
    const { done, env } = await prepare()
    const hooks = await receiver()
    const service = await startService({
      name: `service ${store} webhooks`,
      work: options.work,
      apiKey: options.apiKey,
      env: { ...env, WEBHOOK_ALLOW_PRIVATE: "true" }
    })
    const call = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`http://${HOST}:${service.port}${path}`, {
        method,
        headers: { authorization: `Bearer ${options.apiKey}`, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      const text = await response.text()
      if (response.status >= 300) throw new Error(`${method} ${path} answered ${response.status}: ${text}`)
      return text === "" ? undefined : JSON.parse(text)
    }
    // Iterations (3 writes, 3 events each) per second over `seconds`.
    const measure = async () => {
      let iterations = 0
      const until = performance.now() + seconds * 1000
      await Promise.all(Array.from({ length: CLIENTS }, async (_, client) => {
        while (performance.now() < until) {
          const pet = await call("POST", "/v1/pets", { name: `hook ${client}`, categoryId: 1, status: "available" })
          const order = await call("POST", "/v1/store/orders", { petId: pet.id })
          await call("POST", `/v1/store/orders/${order.id}/approve`)
          iterations++
        }
      }))
      return { perSec: iterations / seconds, events: iterations * 3 }
    }
    try {
      await measure() // warm-up
      const without: Array<number> = []
      const withHook: Array<number> = []
      let delivered = 0
      for (let round = 0; round < rounds; round++) {
        without.push((await measure()).perSec)
        const webhook = await call("POST", "/v1/webhooks", { url: hooks.url, types: TYPES })
        const before = hooks.received()
        const run = await measure()
        withHook.push(run.perSec)
        // Every event of the round delivered before the subscription goes.
        const deadline = performance.now() + 120_000
        while (hooks.received() - before < run.events && performance.now() < deadline) await sleep(100)
        delivered += hooks.received() - before
        await call("DELETE", `/v1/webhooks/${webhook.id}`)
      }
      const row = {
        store,
        withoutPerSec: median(without),
        withPerSec: median(withHook),
        ratio: median(withHook) / median(without),
        delivered
      }
      rows.push(row)
    } finally {
      await stopChild(service.child)
      await hooks.close()
      await done()
    }
  }
  options.report.table(
    ["store", "iterations/s without", "iterations/s with 1 subscription", "with / without", "deliveries"],
    rows.map((row) => [row.store, fmt(row.withoutPerSec), fmt(row.withPerSec), fmtRatio(row.ratio), String(row.delivered)])
  )
  options.report.say(
    `   an iteration = create a pet, place an order, approve it (3 events); medians of ${rounds} rounds of ${seconds} s, ` +
      "interleaved; deliveries: events received by the subscription's receiver (all of them, waited for). Both rounds" +
      " write the outbox: its cost is the outbox section's."
  )
  return rows
}
