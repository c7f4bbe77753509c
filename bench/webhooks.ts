/**
 * The webhooks section.
 *
 * 1. What a dispatcher delivering to one subscription costs the writes. On PostgreSQL and
 *    embedded, 10 concurrent clients create a pet, place an order for it and approve the
 *    order over HTTP, for a few seconds, in rounds without and with a subscription to
 *    every event type (a local receiver answering 204), interleaved (ABAB). Both rounds
 *    write every change's event: the outbox write itself, issue 23's target, is the outbox
 *    section's (outbox.ts).
 * 2. Idle CPU: an instance with 100 caught-up subscriptions against the same instance with
 *    none, over 10 s each (target: within 2x): a subscription with nothing to deliver
 *    should cost the idle dispatcher nothing (its claim compares cursors with the heads of
 *    the log in one statement).
 * 3. 1,000 subscriptions to pet.created on one instance, then 20 creates: the time until
 *    every subscription has every event, deliveries per second, and when each subscription
 *    got its first delivery by its rank (creation order, which is the claim's order among
 *    equals): the delay should grow with the work ahead of it (8 subscriptions at a time,
 *    furthest behind first), and every subscription must get every event.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { cpuMillisOf, fmt, fmtRatio, HOST, median, percentile, sleep, sortedCopy, stopChild } from "./lib.ts"
import { createDatabase, databaseCpu, dropDatabase } from "./pg-admin.ts"
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

interface WebhooksOptions {
  readonly report: Report
  readonly work: string
  readonly apiKey: string
  readonly pgUrl: string | undefined
  readonly seconds?: number
  readonly rounds?: number
}

const writesWithOneSubscription = async (options: WebhooksOptions): Promise<ReadonlyArray<WebhooksRow>> => {
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

// ---------------------------------------------------------------------------------------
// Many subscriptions, and idle ones

/** A receiver answering 204 that keeps, per path, when each message (webhook-id) first came. */
const recordingReceiver = async () => {
  const byPath = new Map<string, Map<string, number>>()
  let received = 0
  let duplicates = 0
  const server = createServer((request, response) => {
    const path = request.url ?? ""
    const message = String(request.headers["webhook-id"] ?? "")
    request.resume()
    request.on("end", () => {
      const at = performance.now()
      received++
      let messages = byPath.get(path)
      if (messages === undefined) byPath.set(path, messages = new Map())
      if (messages.has(message)) duplicates++
      else messages.set(message, at)
      response.writeHead(204).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, HOST, resolve))
  return {
    base: `http://${HOST}:${(server.address() as AddressInfo).port}`,
    /** When each message reached `path` first, by message id. */
    messages: (path: string): ReadonlyMap<string, number> => byPath.get(path) ?? new Map(),
    received: () => received,
    duplicates: () => duplicates,
    close: () => {
      server.closeAllConnections()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}

export interface IdleCpuRow {
  readonly store: string
  readonly seconds: number
  readonly subscriptions: number
  /** CPU of the service's process over the window, without subscriptions and with them. */
  readonly serviceNoneMs: number | undefined
  readonly serviceWithMs: number | undefined
  /** PostgreSQL: CPU of the database's backends over the same windows. */
  readonly databaseNoneMs: number | undefined
  readonly databaseWithMs: number | undefined
}

export interface RankGroup {
  readonly from: number
  readonly to: number
  /** Median, over the group, of the first delivery's arrival, in ms after the first create was sent. */
  readonly firstMs: number
  /** Median, over the group, of the arrival of the subscription's last event. */
  readonly allMs: number
}

export interface ManyRow {
  readonly store: string
  readonly subscriptions: number
  readonly events: number
  /** Distinct (subscription, event) deliveries received, of subscriptions x events. */
  readonly delivered: number
  readonly duplicates: number
  /** Subscriptions that received every event. */
  readonly complete: number
  readonly createsMs: number
  /** From the first create sent to the last delivery received. */
  readonly allDeliveredMs: number
  readonly deliveriesPerSec: number
  readonly firstDeliveryMs: { readonly min: number; readonly max: number }
  readonly groups: ReadonlyArray<RankGroup>
}

const IDLE_SECONDS = 10
const IDLE_SUBSCRIPTIONS = 100
const MANY_SUBSCRIPTIONS = 1_000
const MANY_EVENTS = 20
const RANK_GROUPS: ReadonlyArray<readonly [number, number]> = [[1, 100], [451, 550], [901, 1000]]

const manySubscriptions = async (
  options: WebhooksOptions
): Promise<{ readonly idle: ReadonlyArray<IdleCpuRow>; readonly many: ReadonlyArray<ManyRow> }> => {
  const report = options.report
  report.heading(
    `Webhooks: ${MANY_SUBSCRIPTIONS.toLocaleString("en-US")} subscriptions on one instance, ${MANY_EVENTS} creates; idle CPU with ${IDLE_SUBSCRIPTIONS} caught-up subscriptions`
  )
  const idle: Array<IdleCpuRow> = []
  const many: Array<ManyRow> = []
  const stores: Array<
    readonly [string, () => Promise<{ env: Record<string, string>; database?: string; done: () => Promise<void> }>]
  > = [
    ["embedded", async () => ({ env: { STORE: "embedded", DATA_DIR: join(options.work, "webhooks-many-pglite") }, done: async () => {} })]
  ]
  if (options.pgUrl !== undefined) {
    const pgUrl = options.pgUrl
    stores.unshift(["postgres", async () => {
      const db = await createDatabase(pgUrl, "webhooks_many")
      return { env: { STORE: "postgres", DATABASE_URL: db.url }, database: db.name, done: () => dropDatabase(pgUrl, db.name) }
    }])
  }
  for (const [store, prepare] of stores) {
    report.say(`   running ${store} ...`)
    const { database, done, env } = await prepare()
    const hooks = await recordingReceiver()
    let service: Awaited<ReturnType<typeof startService>> | undefined
    try {
      service = await startService({
        name: `service ${store} webhooks many`,
        work: options.work,
        apiKey: options.apiKey,
        env: { ...env, WEBHOOK_ALLOW_PRIVATE: "true" }
      })
      const port = service.port
      const pid = service.child.pid
      const call = async (method: string, path: string, body?: unknown) => {
        const response = await fetch(`http://${HOST}:${port}${path}`, {
          method,
          headers: { authorization: `Bearer ${options.apiKey}`, "content-type": "application/json" },
          ...(body === undefined ? {} : { body: JSON.stringify(body) })
        })
        const text = await response.text()
        if (response.status >= 300) throw new Error(`${method} ${path} answered ${response.status}: ${text}`)
        return text === "" ? undefined : JSON.parse(text)
      }
      const subscribe = async (paths: ReadonlyArray<string>): Promise<Array<string>> => {
        const ids: Array<string> = new Array(paths.length)
        let next = 0
        await Promise.all(Array.from({ length: 8 }, async () => {
          while (next < paths.length) {
            const i = next++
            ids[i] = String((await call("POST", "/v1/webhooks", { url: `${hooks.base}${paths[i]}`, types: ["pet.created"] })).id)
          }
        }))
        return ids
      }
      const waitFor = async (what: string, done: () => boolean, timeoutMs: number) => {
        const deadline = performance.now() + timeoutMs
        while (!done()) {
          if (performance.now() > deadline) throw new Error(`${store}: ${what} not within ${timeoutMs / 1000} s`)
          await sleep(50)
        }
      }
      const idleCpu = async () => {
        const db = database === undefined || options.pgUrl === undefined ? undefined : await databaseCpu(options.pgUrl, database)
        const before = cpuMillisOf(pid)
        await sleep(IDLE_SECONDS * 1000)
        const after = cpuMillisOf(pid)
        return {
          service: before === undefined || after === undefined ? undefined : after - before,
          database: db === undefined ? undefined : await db.took()
        }
      }

      // Idle, without subscriptions, then with 100 that have received everything.
      await sleep(3_000)
      const none = await idleCpu()
      const idlePaths = Array.from({ length: IDLE_SUBSCRIPTIONS }, (_, i) => `/idle/${i}`)
      const idleIds = await subscribe(idlePaths)
      await call("POST", "/v1/pets", { name: "idle hook", categoryId: 1 })
      await waitFor("the idle subscriptions' delivery", () => idlePaths.every((path) => hooks.messages(path).size === 1), 120_000)
      await sleep(3_000)
      const withIdle = await idleCpu()
      idle.push({
        store,
        seconds: IDLE_SECONDS,
        subscriptions: IDLE_SUBSCRIPTIONS,
        serviceNoneMs: none.service,
        serviceWithMs: withIdle.service,
        databaseNoneMs: none.database,
        databaseWithMs: withIdle.database
      })
      for (const id of idleIds) await call("DELETE", `/v1/webhooks/${id}`)

      // 1,000 subscriptions, ranked by id (the claim's order among equal cursors).
      const paths = Array.from({ length: MANY_SUBSCRIPTIONS }, (_, i) => `/many/${i}`)
      const ids = await subscribe(paths)
      const rankOf = new Map(
        paths.map((path, i) => [path, BigInt(ids[i]!)] as const)
          .sort(([, a], [, b]) => (a < b ? -1 : a > b ? 1 : 0))
          .map(([path], i) => [path, i + 1] as const)
      )
      await sleep(2_000)
      const duplicatesBefore = hooks.duplicates()
      const started = performance.now()
      for (let i = 0; i < MANY_EVENTS; i++) await call("POST", "/v1/pets", { name: `many hooks ${i}`, categoryId: 1 })
      const createsMs = performance.now() - started
      const complete = () => paths.filter((path) => hooks.messages(path).size >= MANY_EVENTS).length
      await waitFor(
        `every subscription's ${MANY_EVENTS} events`,
        () => complete() === MANY_SUBSCRIPTIONS,
        600_000
      )
      const perPath = paths.map((path) => {
        const times = [...hooks.messages(path).values()]
        return { rank: rankOf.get(path)!, first: Math.min(...times) - started, last: Math.max(...times) - started }
      })
      const allDeliveredMs = Math.max(...perPath.map((entry) => entry.last))
      const delivered = paths.reduce((sum, path) => sum + hooks.messages(path).size, 0)
      const firsts = sortedCopy(perPath.map((entry) => entry.first))
      many.push({
        store,
        subscriptions: MANY_SUBSCRIPTIONS,
        events: MANY_EVENTS,
        delivered,
        duplicates: hooks.duplicates() - duplicatesBefore,
        complete: complete(),
        createsMs,
        allDeliveredMs,
        deliveriesPerSec: delivered / (allDeliveredMs / 1000),
        firstDeliveryMs: { min: percentile(firsts, 0), max: percentile(firsts, 100) },
        groups: RANK_GROUPS.map(([from, to]) => {
          const group = perPath.filter((entry) => entry.rank >= from && entry.rank <= to)
          return { from, to, firstMs: median(group.map((entry) => entry.first)), allMs: median(group.map((entry) => entry.last)) }
        })
      })
    } catch (error) {
      report.note(`webhooks many/${store}: ${error instanceof Error ? error.message : String(error)}`)
    } finally {
      if (service !== undefined) await stopChild(service.child)
      await hooks.close()
      await done()
    }
  }

  const ratio = (none: number | undefined, withSome: number | undefined) =>
    none === undefined || withSome === undefined ? undefined : withSome / Math.max(none, 10)
  report.table(
    [
      "store",
      `service CPU ms / ${IDLE_SECONDS} s: none`,
      `${IDLE_SUBSCRIPTIONS} caught up`,
      "x none (target <= 2)",
      "PostgreSQL backends ms: none",
      `${IDLE_SUBSCRIPTIONS} caught up`,
      "x none"
    ],
    idle.map((row) => [
      row.store,
      fmt(row.serviceNoneMs),
      fmt(row.serviceWithMs),
      fmtRatio(ratio(row.serviceNoneMs, row.serviceWithMs)),
      fmt(row.databaseNoneMs),
      fmt(row.databaseWithMs),
      fmtRatio(ratio(row.databaseNoneMs, row.databaseWithMs))
    ])
  )
  report.say(`   idle: the instance doing nothing for ${IDLE_SECONDS} s, without subscriptions, then with ${IDLE_SUBSCRIPTIONS} to pet.created that`)
  report.say("   have received the one event since (3 s after it); CPU read from /proc in 10 ms ticks (a ratio's denominator is at")
  report.say("   least one tick). PostgreSQL backends: this database's only.")
  for (const row of idle) {
    const x = ratio(row.serviceNoneMs, row.serviceWithMs)
    report.say(`   ${row.store}: idle CPU target (within 2x) ${x === undefined ? "not measured" : x <= 2 ? "met" : "NOT met"} (${fmtRatio(x)}).`)
  }
  report.table(
    ["store", "subscriptions", "events", "delivered", "complete", "duplicates", "creates ms", "all delivered ms", "deliveries/s", "first delivery ms: earliest", "latest"],
    many.map((row) => [
      row.store,
      String(row.subscriptions),
      String(row.events),
      `${row.delivered}/${row.subscriptions * row.events}`,
      `${row.complete}/${row.subscriptions}`,
      String(row.duplicates),
      fmt(row.createsMs),
      fmt(row.allDeliveredMs),
      fmt(row.deliveriesPerSec),
      fmt(row.firstDeliveryMs.min),
      fmt(row.firstDeliveryMs.max)
    ])
  )
  report.table(
    ["store", "ranks", "first delivery ms (median)", "every event received ms (median)"],
    many.flatMap((row) =>
      row.groups.map((group) => [row.store, `${group.from}-${group.to}`, fmt(group.firstMs), fmt(group.allMs)])
    )
  )
  report.say(`   ${MANY_SUBSCRIPTIONS} subscriptions to pet.created (one receiver answering 204, a path each), then ${MANY_EVENTS} creates one`)
  report.say("   after another; times in ms after the first create was sent. Rank = the subscription's place in id order, the")
  report.say("   claim's order among subscriptions equally far behind; deliveries/s = deliveries / all delivered. Complete = the")
  report.say("   subscriptions that received every event.")
  return { idle, many }
}

export interface WebhooksResult {
  readonly rows: ReadonlyArray<WebhooksRow>
  readonly idle: ReadonlyArray<IdleCpuRow>
  readonly many: ReadonlyArray<ManyRow>
}

export const webhooksSection = async (options: WebhooksOptions): Promise<WebhooksResult> => {
  const rows = await writesWithOneSubscription(options)
  return { rows, ...await manySubscriptions(options) }
}
