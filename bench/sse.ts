/**
 * The SSE section: 1,000 Server-Sent Events subscribers held on one instance (memory
 * store), and what they cost in resident memory. Issue 23's target: under 100 MB more RSS
 * than the idle instance. Each subscriber is a real HTTP connection from this process;
 * a burst of creates is then delivered to every one of them, so the figure includes the
 * fan-out at work, not only idle sockets.
 */
import { type ClientRequest, get, type IncomingMessage } from "node:http"
import { readFileSync } from "node:fs"
import { fmt, HOST, sleep, stopChild } from "./lib.ts"
import type { Report } from "./report.ts"
import { startService } from "./servers.ts"

/** VmRSS of `pid` in bytes (Linux /proc), or undefined. */
const rssBytes = (pid: number | undefined): number | undefined => {
  if (pid === undefined) return undefined
  try {
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))
    return match === null ? undefined : Number(match[1]) * 1024
  } catch {
    return undefined
  }
}

interface Subscriber {
  readonly request: ClientRequest
  events: number
  readonly connected: Promise<void>
}

const subscribe = (port: number, apiKey: string): Subscriber => {
  let resolveConnected: () => void = () => {}
  const connected = new Promise<void>((resolve, reject) => {
    resolveConnected = resolve
    setTimeout(() => reject(new Error("no first line within 30 s")), 30_000).unref()
  })
  const subscriber: { request: ClientRequest | undefined; events: number } = { request: undefined, events: 0 }
  subscriber.request = get({
    host: HOST,
    port,
    path: "/v1/events",
    agent: false,
    headers: { authorization: `Bearer ${apiKey}`, accept: "text/event-stream" }
  }, (response: IncomingMessage) => {
    response.setEncoding("utf8")
    response.on("data", (chunk: string) => {
      if (chunk.includes(": connected")) resolveConnected()
      subscriber.events += chunk.split("\nevent: ").length - 1
    })
  })
  subscriber.request.on("error", () => {})
  return Object.assign(subscriber as Subscriber, { connected })
}

export interface SseResult {
  readonly subscribers: number
  readonly events: number
  readonly rssIdleBytes: number | undefined
  readonly rssHeldBytes: number | undefined
  readonly rssAfterEventsBytes: number | undefined
  readonly connectMs: number
  readonly deliverMs: number
}

export const sseSection = async (options: {
  readonly report: Report
  readonly work: string
  readonly apiKey: string
  readonly subscribers?: number
  readonly events?: number
}): Promise<SseResult> => {
  const count = options.subscribers ?? 1000
  const events = options.events ?? 20
  options.report.heading(`SSE: ${count.toLocaleString("en-US")} subscribers on one instance (memory store)`)
  const service = await startService({ name: "service memory sse", work: options.work, apiKey: options.apiKey, env: { STORE: "memory" } })
  try {
    const pid = service.child.pid
    await sleep(1_000)
    const rssIdleBytes = rssBytes(pid)
    const connectStarted = performance.now()
    const subscribers = Array.from({ length: count }, () => subscribe(service.port, options.apiKey))
    await Promise.all(subscribers.map((subscriber) => subscriber.connected))
    const connectMs = performance.now() - connectStarted
    await sleep(1_000)
    const rssHeldBytes = rssBytes(pid)
    const deliverStarted = performance.now()
    for (let i = 0; i < events; i++) {
      const response = await fetch(`http://${HOST}:${service.port}/v1/pets`, {
        method: "POST",
        headers: { authorization: `Bearer ${options.apiKey}`, "content-type": "application/json" },
        body: JSON.stringify({ name: `sse ${i}`, categoryId: 1 })
      })
      if (response.status !== 201) throw new Error(`create answered ${response.status}`)
    }
    while (subscribers.some((subscriber) => subscriber.events < events)) {
      if (performance.now() - deliverStarted > 60_000) throw new Error("not every subscriber got every event within 60 s")
      await sleep(50)
    }
    const deliverMs = performance.now() - deliverStarted
    const rssAfterEventsBytes = rssBytes(pid)
    for (const subscriber of subscribers) subscriber.request.destroy()
    const mb = (bytes: number | undefined) => bytes === undefined ? undefined : bytes / 1024 / 1024
    const increase = rssIdleBytes === undefined || rssAfterEventsBytes === undefined
      ? undefined
      : Math.max(rssHeldBytes ?? 0, rssAfterEventsBytes) - rssIdleBytes
    options.report.table(
      ["subscribers", "RSS idle MB", "RSS held MB", `RSS after ${events} events MB`, "increase MB (target < 100)", "connect ms", "deliver all ms"],
      [[
        String(count),
        fmt(mb(rssIdleBytes)),
        fmt(mb(rssHeldBytes)),
        fmt(mb(rssAfterEventsBytes)),
        fmt(mb(increase)),
        fmt(connectMs),
        fmt(deliverMs)
      ]]
    )
    options.report.say(`   every subscriber received all ${events} events (pet.created) through the one shared fan-out.`)
    return { subscribers: count, events, rssIdleBytes, rssHeldBytes, rssAfterEventsBytes, connectMs, deliverMs }
  } finally {
    await stopChild(service.child)
  }
}
