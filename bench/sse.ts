/**
 * The SSE section: what Server-Sent Events streams cost one instance.
 *
 * 1. 1,000 subscribers held (memory store) and the resident memory they add. Issue 23's
 *    target: under 100 MB more RSS than the idle instance. Each subscriber is a real HTTP
 *    connection from this process; a burst of creates is then delivered to every one of
 *    them, so the figure includes the fan-out at work, not only idle sockets.
 * 2. Creates/s during 1,000 open streams (memory store, and PostgreSQL): autocannon's
 *    creates (50 connections) without streams, then with 1,000 streams from this process
 *    that read every event, in interleaved rounds; the streams start at the log's end
 *    (Last-Event-ID), so a round measures the live fan-out, not a catch-up. Target: with
 *    streams at least 0.5x the creates/s without. Server CPU per create in both rounds
 *    (with streams, up to the moment every stream has every event), the PostgreSQL
 *    backends' beside it.
 * 3. 200 streams that never read, on a 200,000-event log (PostgreSQL, embedded): each
 *    starts at 0, so the whole log is ahead of it; its client reads the response head and
 *    then nothing (a paused socket). The fan-out reads the log a page at a time as the
 *    socket takes it, so each stream should hold about a page in the process once its
 *    socket's kernel buffers are full: the RSS they add, per stream, against
 *    STREAM_RSS_BOUND, the kernel's TCP memory beside it; and a list's latency from
 *    another client without them, while the server fills the sockets, and once every
 *    stream is blocked (waited for up to 2 minutes; target: p99 with them at most 2x
 *    without). Then the same with 200 streams from the log's end, which have nothing to
 *    catch up.
 */
import { type ClientRequest, get, type IncomingMessage } from "node:http"
import { readFileSync } from "node:fs"
import { connect, type Socket } from "node:net"
import { join } from "node:path"
import type { CannonResult } from "./cannon.ts"
import { type LoadGenerator, startLoadGenerator } from "./cannon-client.ts"
import { cpuMillisOf, fmt, fmtRatio, HOST, median, runNodeChild, sleep, stopChild } from "./lib.ts"
import { createDatabase, databaseCpu, dropDatabase } from "./pg-admin.ts"
import type { Report } from "./report.ts"
import { type Server, startService } from "./servers.ts"
import type { SeedArgs, SeedResult } from "./sse-seed.ts"

/**
 * What a stream that does not read may hold, at most, in the service's resident memory:
 * a held stream (its socket, request, fiber and subscription: 60-68 KB a subscriber in
 * part 1, events flowing) plus the one page of the log it is blocked on (STREAM_PAGE = 100
 * events: the rows read as objects, about 400 B each, their frames and the bytes written,
 * about 230 B each, some 90 KB) and the bytes Node's socket still holds until the kernel
 * takes them (a page, about 23 KB): some 180 KB, rounded up to leave the heap its slack.
 * The kernel's socket buffers are not the process's and are reported apart (on loopback
 * up to tcp_wmem's maximum, 4 MB, a connection). On the embedded store the RSS also holds
 * PGlite, whose memory grows as the streams read the log: the JavaScript heap and external
 * memory are reported beside it. docs/reliability.md gives the measurements.
 */
export const STREAM_RSS_BOUND = 256 * 1024

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

/** The kernel's TCP buffer memory of the whole machine, in bytes (/proc/net/sockstat, pages). */
const kernelTcpBytes = (): number | undefined => {
  try {
    const match = /^TCP:.* mem (\d+)$/m.exec(readFileSync("/proc/net/sockstat", "utf8"))
    return match === null ? undefined : Number(match[1]) * 4096
  } catch {
    return undefined
  }
}

/** Write system calls `pid` has made (write, writev...: /proc/<pid>/io's syscw), or undefined. */
const writeSyscalls = (pid: number | undefined): number | undefined => {
  if (pid === undefined) return undefined
  try {
    const match = /^syscw: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, "utf8"))
    return match === null ? undefined : Number(match[1])
  } catch {
    return undefined
  }
}

/**
 * The service's JavaScript memory, heap used + external (ArrayBuffers and Buffers), from its
 * GET /metrics (nodejs_heap_size_used_bytes, nodejs_external_memory_bytes): unlike the RSS,
 * it leaves out the embedded database's own memory (PGlite's buffers), though it counts
 * garbage not yet collected.
 */
const jsMemoryBytes = async (port: number): Promise<number | undefined> => {
  try {
    const text = await (await fetch(`http://${HOST}:${port}/metrics`)).text()
    const value = (name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, "m").exec(text)?.[1])
    const total = value("nodejs_heap_size_used_bytes") + value("nodejs_external_memory_bytes")
    return Number.isFinite(total) ? total : undefined
  } catch {
    return undefined
  }
}

const mb = (bytes: number | undefined) => bytes === undefined ? undefined : bytes / 1024 / 1024

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

// ---------------------------------------------------------------------------------------
// Streams that read everything, cheaply: each chunk is looked at for its last event id
// only (one search from the end), so 1,000 of them cost this process little per event.

const ID_LINE = Buffer.from("id: ")
const CONNECTED = Buffer.from(": connected")

/** The id of the last whole `id:` line in `chunk`, or undefined. */
const lastIdIn = (chunk: Buffer): number | undefined => {
  let at = chunk.lastIndexOf(ID_LINE)
  while (at !== -1) {
    const end = chunk.indexOf(10, at)
    if (end !== -1 && (at === 0 || chunk[at - 1] === 10)) return Number(chunk.toString("latin1", at + 4, end))
    if (at === 0) return undefined
    at = chunk.lastIndexOf(ID_LINE, at - 1)
  }
  return undefined
}

interface Reader {
  readonly request: ClientRequest
  /** The last event id received. */
  lastId: number
  bytes: number
  /** Reads that brought data: about the server's writes (fewer when the kernel joins them). */
  chunks: number
  readonly connected: Promise<void>
}

const openReader = (port: number, apiKey: string, lastEventId: number): Reader => {
  let resolveConnected: () => void = () => {}
  let rejectConnected: (error: Error) => void = () => {}
  const connected = new Promise<void>((resolve, reject) => {
    resolveConnected = resolve
    rejectConnected = reject
    setTimeout(() => reject(new Error("no first line within 30 s")), 30_000).unref()
  })
  const reader = { lastId: lastEventId, bytes: 0, chunks: 0, connected } as Reader & { request: ClientRequest }
  reader.request = get({
    host: HOST,
    port,
    path: "/v1/events",
    agent: false,
    headers: { authorization: `Bearer ${apiKey}`, accept: "text/event-stream", "last-event-id": String(lastEventId) }
  }, (response: IncomingMessage) => {
    if (response.statusCode !== 200) rejectConnected(new Error(`the stream answered ${response.statusCode}`))
    response.on("data", (chunk: Buffer) => {
      if (reader.bytes === 0 && chunk.includes(CONNECTED)) resolveConnected()
      reader.bytes += chunk.length
      reader.chunks++
      const id = lastIdIn(chunk)
      if (id !== undefined) reader.lastId = id
    })
  })
  reader.request.on("error", (error) => rejectConnected(error))
  return reader
}

// ---------------------------------------------------------------------------------------
// Streams that never read: a raw socket sends the request, takes the first chunk it gets
// (the response head, perhaps more) and is paused from then on.

interface IdleStream {
  readonly socket: Socket
  /** What was read before the pause. */
  readonly first: Buffer
}

const openIdleStream = (port: number, apiKey: string, lastEventId?: number): Promise<IdleStream> =>
  new Promise((resolve, reject) => {
    const socket = connect({ host: HOST, port })
    const timer = setTimeout(() => {
      socket.destroy()
      reject(new Error("no response head within 30 s"))
    }, 30_000)
    socket.once("error", (error) => {
      clearTimeout(timer)
      reject(error)
    })
    socket.once("data", (chunk: Buffer) => {
      socket.pause()
      clearTimeout(timer)
      const head = chunk.toString("latin1", 0, 12)
      if (head !== "HTTP/1.1 200") {
        socket.destroy()
        reject(new Error(`the stream answered ${JSON.stringify(chunk.toString("latin1", 0, 200))}`))
      } else resolve({ socket, first: chunk })
    })
    socket.write(
      // Without Last-Event-ID, after=0: the whole log ahead (a stream without a cursor starts at the log's end).
      `GET /v1/events${lastEventId === undefined ? "?after=0" : ""} HTTP/1.1\r\nHost: ${HOST}:${port}\r\n` +
        `Authorization: Bearer ${apiKey}\r\nAccept: text/event-stream\r\n` +
        (lastEventId === undefined ? "" : `Last-Event-ID: ${lastEventId}\r\n`) + "\r\n"
    )
  })

/**
 * Resumes an idle stream and reads it for a while: the ids it brings must be 1, 2, 3...
 * with none missing or repeated (the whole log from 0, in order). Answers how many.
 */
const readOnInOrder = async (stream: IdleStream, wantEvents: number, timeoutMs: number): Promise<{ ids: number; inOrder: boolean }> => {
  const chunks: Array<Buffer> = [stream.first]
  let bytes = stream.first.length
  const enough = wantEvents * 200
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, timeoutMs)
    stream.socket.on("data", (chunk: Buffer) => {
      chunks.push(chunk)
      bytes += chunk.length
      if (bytes >= enough) {
        clearTimeout(timer)
        resolve()
      }
    })
    stream.socket.resume()
  })
  stream.socket.pause()
  const ids = [...Buffer.concat(chunks).toString("latin1").matchAll(/\nid: (\d+)\n/g)].map((match) => Number(match[1]))
  return { ids: ids.length, inOrder: ids.every((id, i) => id === i + 1) }
}

// ---------------------------------------------------------------------------------------
// Helpers

const call = async (port: number, apiKey: string, method: string, path: string, body?: unknown): Promise<string> => {
  const response = await fetch(`http://${HOST}:${port}${path}`, {
    method,
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  if (response.status >= 300) throw new Error(`${method} ${path} answered ${response.status}: ${text.slice(0, 300)}`)
  return text
}

/** The id of the log's latest event, at least `atLeast`: a search with one-event pages. */
const latestEventId = async (port: number, apiKey: string, atLeast: number): Promise<number> => {
  const hasAfter = async (id: number) => (await call(port, apiKey, "GET", `/v1/events?after=${id}&limit=1`)) !== "[]"
  if (!(await hasAfter(atLeast))) return atLeast
  let low = atLeast
  let step = 1024
  let high = low + step
  while (await hasAfter(high)) {
    low = high
    step *= 2
    high = low + step
  }
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2)
    if (await hasAfter(middle)) low = middle
    else high = middle
  }
  return high
}

/** Waits until the server's CPU stays under one tick (10 ms) per 500 ms twice in a row, at most `timeoutMs`. */
const settled = async (pid: number | undefined, timeoutMs: number): Promise<number> => {
  const started = performance.now()
  let quiet = 0
  let before = cpuMillisOf(pid) ?? 0
  while (quiet < 2 && performance.now() - started < timeoutMs) {
    await sleep(500)
    const now = cpuMillisOf(pid) ?? 0
    quiet = now - before <= 10 ? quiet + 1 : 0
    before = now
  }
  return performance.now() - started
}

const created = (result: CannonResult) => result.statuses["201"] ?? 0
const others = (result: CannonResult, ok: string) =>
  Object.entries(result.statuses).filter(([status]) => status !== ok).reduce((sum, [, count]) => sum + count, 0) + result.errors

interface Store {
  readonly name: string
  readonly env: Record<string, string>
  /** postgres: the database, for its backends' CPU. */
  readonly database?: { readonly adminUrl: string; readonly name: string }
  readonly done: () => Promise<void>
}

// ---------------------------------------------------------------------------------------
// 1. 1,000 subscribers held

export interface HeldResult {
  readonly subscribers: number
  readonly events: number
  readonly rssIdleBytes: number | undefined
  readonly rssHeldBytes: number | undefined
  readonly rssAfterEventsBytes: number | undefined
  readonly connectMs: number
  readonly deliverMs: number
}

const heldSubscribers = async (options: SseOptions, count: number, events: number): Promise<HeldResult> => {
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
    options.report.say(
      `   target: ${increase === undefined ? "not measured" : increase < 100 * 1024 * 1024 ? "met" : "NOT met"}; ` +
        `${fmt(increase === undefined ? undefined : increase / count / 1024)} KB per subscriber.`
    )
    return { subscribers: count, events, rssIdleBytes, rssHeldBytes, rssAfterEventsBytes, connectMs, deliverMs }
  } finally {
    await stopChild(service.child)
  }
}

// ---------------------------------------------------------------------------------------
// 2. Creates/s during 1,000 reading streams

export interface CreatesRow {
  readonly store: string
  readonly streams: number
  readonly createsPerSec: number
  readonly ratio: number | undefined
  readonly ratioMin: number | undefined
  readonly ratioMax: number | undefined
  readonly serverCpuUsPerCreate: number | undefined
  readonly databaseCpuUsPerCreate: number | undefined
  readonly p99Ms: number
  readonly failed: number
  /** With streams: from the end of the round until every stream had every event. */
  readonly caughtUpMs: number | undefined
  /** With streams: what the streams received, over every round. */
  readonly streamMegabytes: number | undefined
  /** With streams: this process's CPU per create (the 1,000 clients reading). */
  readonly clientCpuUsPerCreate: number | undefined
  /** With streams: chunks the streams received per create. */
  readonly chunksPerCreate: number | undefined
  /** The server's write system calls per second over the round (its answers, and with streams their frames). */
  readonly serverWritesPerSec: number | undefined
}

const createsDuringStreams = async (
  options: SseOptions,
  store: Store,
  load: LoadGenerator,
  params: { readonly streams: number; readonly seconds: number; readonly rounds: number }
): Promise<ReadonlyArray<CreatesRow>> => {
  options.report.say(`   ${store.name}: creates without, then with ${params.streams} reading streams ...`)
  const service = await startService({ name: `service ${store.name} sse creates`, work: options.work, apiKey: options.apiKey, env: store.env })
  const pid = service.child.pid
  const creates = (seconds: number) =>
    load.run({
      port: service.port,
      scenario: "create",
      connections: 50,
      seconds,
      apiKey: options.apiKey,
      idMin: 1,
      idMax: 1,
      seed: 1
    })
  interface Round {
    readonly perSec: number
    readonly cpuUs: number | undefined
    readonly dbCpuUs: number | undefined
    readonly p99: number
    readonly failed: number
    readonly caughtUpMs?: number | undefined
    readonly bytes?: number | undefined
    readonly clientCpuUs?: number | undefined
    readonly chunksPerCreate?: number | undefined
    readonly writesPerSec: number | undefined
  }
  const without: Array<Round> = []
  const withStreams: Array<Round> = []
  try {
    await creates(2) // warm-up
    let latest = await latestEventId(service.port, options.apiKey, 0)
    for (let round = 0; round < params.rounds; round++) {
      for (const streams of [0, params.streams]) {
        const readers = Array.from({ length: streams }, () => openReader(service.port, options.apiKey, latest))
        await Promise.all(readers.map((reader) => reader.connected))
        if (streams > 0) await sleep(500)
        const db = store.database === undefined ? undefined : await databaseCpu(store.database.adminUrl, store.database.name)
        const cpuBefore = cpuMillisOf(pid)
        const clientBefore = process.cpuUsage()
        const writesBefore = writeSyscalls(pid)
        const result = await creates(params.seconds)
        const ended = performance.now()
        const writesAfter = writeSyscalls(pid)
        latest = await latestEventId(service.port, options.apiKey, latest)
        let caughtUpMs: number | undefined
        if (streams > 0) {
          while (readers.some((reader) => reader.lastId < latest)) {
            if (performance.now() - ended > 120_000) {
              const behind = readers.filter((reader) => reader.lastId < latest).length
              throw new Error(`${behind} of ${streams} streams lacked events 120 s after the round (latest ${latest})`)
            }
            await sleep(20)
          }
          caughtUpMs = performance.now() - ended
        }
        const cpuAfter = cpuMillisOf(pid)
        const client = process.cpuUsage(clientBefore)
        const dbMillis = db === undefined ? undefined : await db.took()
        const count = created(result)
        const row: Round = {
          perSec: count / result.seconds,
          cpuUs: cpuBefore === undefined || cpuAfter === undefined || count === 0 ? undefined : ((cpuAfter - cpuBefore) * 1000) / count,
          dbCpuUs: dbMillis === undefined || count === 0 ? undefined : (dbMillis * 1000) / count,
          p99: result.latencyMs.p99,
          failed: others(result, "201"),
          writesPerSec: writesBefore === undefined || writesAfter === undefined ? undefined : (writesAfter - writesBefore) / result.seconds,
          ...(streams > 0
            ? {
              caughtUpMs,
              bytes: readers.reduce((sum, reader) => sum + reader.bytes, 0),
              clientCpuUs: count === 0 ? undefined : ((client.user + client.system) / count),
              chunksPerCreate: count === 0 ? undefined : readers.reduce((sum, reader) => sum + reader.chunks, 0) / count
            }
            : {})
        }
        ;(streams > 0 ? withStreams : without).push(row)
        for (const reader of readers) reader.request.destroy()
        if (streams > 0) await settled(pid, 10_000)
      }
    }
  } finally {
    await stopChild(service.child)
  }
  const ratios = withStreams.map((round, i) => round.perSec / without[i]!.perSec)
  const medianOf = (rounds: ReadonlyArray<Round>, pick: (round: Round) => number | undefined) => {
    const values = rounds.map(pick).filter((value): value is number => value !== undefined)
    return values.length === 0 ? undefined : median(values)
  }
  const rowOf = (rounds: ReadonlyArray<Round>, streams: number): CreatesRow => ({
    store: store.name,
    streams,
    createsPerSec: median(rounds.map((round) => round.perSec)),
    ratio: streams === 0 ? undefined : median(ratios),
    ratioMin: streams === 0 ? undefined : Math.min(...ratios),
    ratioMax: streams === 0 ? undefined : Math.max(...ratios),
    serverCpuUsPerCreate: medianOf(rounds, (round) => round.cpuUs),
    databaseCpuUsPerCreate: medianOf(rounds, (round) => round.dbCpuUs),
    p99Ms: median(rounds.map((round) => round.p99)),
    failed: rounds.reduce((sum, round) => sum + round.failed, 0),
    caughtUpMs: medianOf(rounds, (round) => round.caughtUpMs),
    streamMegabytes: streams === 0 ? undefined : mb(rounds.reduce((sum, round) => sum + (round.bytes ?? 0), 0)),
    clientCpuUsPerCreate: medianOf(rounds, (round) => round.clientCpuUs),
    chunksPerCreate: medianOf(rounds, (round) => round.chunksPerCreate),
    serverWritesPerSec: medianOf(rounds, (round) => round.writesPerSec)
  })
  return [rowOf(without, 0), rowOf(withStreams, params.streams)]
}

// ---------------------------------------------------------------------------------------
// 3. Streams that never read, on a long log

interface ListRun {
  readonly seconds: number
  readonly p50: number
  readonly p99: number
  /** The server's CPU over the run, per second. */
  readonly serverCpuMsPerSec: number | undefined
}

export interface IdleStreamsRow {
  readonly store: string
  /** Where the streams start: at event 0 (the whole log ahead) or at the log's end. */
  readonly from: "0" | "end"
  readonly events: number
  readonly streams: number
  readonly seedMs: number
  readonly openMs: number
  /** From the first stream open until the server's CPU went quiet; undefined when it did not within the wait. */
  readonly quietAfterMs: number | undefined
  readonly rssBeforeBytes: number | undefined
  readonly rssWithBytes: number | undefined
  readonly rssPerStreamBytes: number | undefined
  /** The JavaScript heap used + external memory added, per stream (jsMemoryBytes). */
  readonly jsPerStreamBytes: number | undefined
  readonly kernelTcpPerStreamBytes: number | undefined
  readonly listWithout: ReadonlyArray<ListRun>
  /** Right after the streams opened, while the server fills their sockets. */
  readonly listFirst: ListRun
  readonly p99RatioFirst: number
  /**
   * Once the server went quiet (every stream blocked on its socket), or at the end of the
   * wait (quietAfterMs undefined) while it still filled them.
   */
  readonly listLater: ListRun
  readonly p99RatioLater: number
  readonly resumed: { readonly ids: number; readonly inOrder: boolean } | undefined
}

// A stream from event 0 fills its socket's kernel buffers first: on loopback the send
// buffer grows to tcp_wmem's maximum (4 MB here), some 20,000 events a stream, read from
// the log a page at a time; 200 of them take minutes of the server's CPU on these 2 shared
// cores. The wait is bounded: the figures after it say whether the server was still at it.
const SETTLE_WAIT_MS = 120_000

const idleStreamsOnLongLog = async (
  options: SseOptions,
  store: Store & { readonly seed: Omit<SeedArgs, "resultPath" | "count"> },
  load: LoadGenerator,
  params: { readonly streams: number; readonly events: number; readonly seconds: number }
): Promise<ReadonlyArray<IdleStreamsRow>> => {
  options.report.say(`   ${store.name}: seeding ${params.events.toLocaleString("en-US")} pets and their events ...`)
  const resultPath = join(options.work, `sse-seed-${store.name}.json`)
  const seeded = await runNodeChild<SeedResult>({
    script: "sse-seed.ts",
    arg: { ...store.seed, count: params.events, resultPath } satisfies SeedArgs,
    resultPath,
    timeoutMs: 300_000
  })
  if (seeded.result === undefined) {
    throw new Error(`seeding ${store.name} failed (exit ${seeded.exit}): ${seeded.stderr.trim().split("\n").slice(-5).join(" | ")}`)
  }
  const seed = seeded.result
  const service: Server = await startService({
    name: `service ${store.name} sse idle streams`,
    work: options.work,
    apiKey: options.apiKey,
    env: store.env
  })
  const pid = service.child.pid
  const streams: Array<IdleStream> = []
  try {
    const list = async (): Promise<ListRun> => {
      const before = cpuMillisOf(pid)
      const result = await load.run({
        port: service.port,
        scenario: "list",
        connections: 2,
        seconds: params.seconds,
        apiKey: options.apiKey,
        idMin: 1,
        idMax: params.events,
        seed: 1
      })
      const after = cpuMillisOf(pid)
      if (others(result, "200") > 0) throw new Error(`list: ${JSON.stringify(result.statuses)}, ${result.errors} errors`)
      return {
        seconds: result.seconds,
        p50: result.latencyMs.p50,
        p99: result.latencyMs.p99,
        serverCpuMsPerSec: before === undefined || after === undefined ? undefined : (after - before) / result.seconds
      }
    }
    await list() // warm-up
    // The embedded store's first maintenance pass after the seeding (VACUUM ANALYZE) comes first.
    await settled(pid, 90_000)
    const perStream = (before: number | undefined, after: number | undefined) =>
      before === undefined || after === undefined ? undefined : (after - before) / params.streams
    const rows: Array<IdleStreamsRow> = []
    // Streams from 0 (the whole log ahead of each), then from the log's end (nothing ahead).
    for (const from of ["0", "end"] as const) {
      const rssBeforeBytes = rssBytes(pid)
      const jsBefore = await jsMemoryBytes(service.port)
      const tcpBefore = kernelTcpBytes()
      const first = await list()
      options.report.say(`   ${store.name}: ${params.streams} streams from ${from === "0" ? "event 0" : "the log's end"} that do not read ...`)
      const openStarted = performance.now()
      const lastEventId = from === "0" ? undefined : seed.lastEventId
      streams.push(
        ...await Promise.all(Array.from({ length: params.streams }, () => openIdleStream(service.port, options.apiKey, lastEventId)))
      )
      const openMs = performance.now() - openStarted
      const firstWith = await list()
      const settleMs = await settled(pid, SETTLE_WAIT_MS)
      const quiet = settleMs < SETTLE_WAIT_MS
      const rssWithBytes = rssBytes(pid)
      const jsWith = await jsMemoryBytes(service.port)
      const tcpWith = kernelTcpBytes()
      const laterWith = await list()
      const resumed = from === "0" ? await readOnInOrder(streams[0]!, 5_000, 20_000) : undefined
      for (const stream of streams.splice(0)) stream.socket.destroy()
      await settled(pid, 10_000)
      const last = await list()
      rows.push({
        store: store.name,
        from,
        events: seed.events,
        streams: params.streams,
        seedMs: seed.millis,
        openMs,
        quietAfterMs: quiet ? openMs + firstWith.seconds * 1000 + settleMs : undefined,
        rssBeforeBytes,
        rssWithBytes,
        rssPerStreamBytes: perStream(rssBeforeBytes, rssWithBytes),
        jsPerStreamBytes: perStream(jsBefore, jsWith),
        kernelTcpPerStreamBytes: perStream(tcpBefore, tcpWith),
        listWithout: [first, last],
        listFirst: firstWith,
        p99RatioFirst: firstWith.p99 / ((first.p99 + last.p99) / 2),
        listLater: laterWith,
        p99RatioLater: laterWith.p99 / ((first.p99 + last.p99) / 2),
        resumed
      })
    }
    return rows
  } finally {
    for (const stream of streams) stream.socket.destroy()
    await stopChild(service.child)
  }
}

// ---------------------------------------------------------------------------------------

export interface SseOptions {
  readonly report: Report
  readonly work: string
  readonly apiKey: string
  readonly pgUrl: string | undefined
}

export interface SseResult {
  readonly held: HeldResult
  readonly creates: ReadonlyArray<CreatesRow>
  readonly idleStreams: ReadonlyArray<IdleStreamsRow>
  readonly streamRssBoundBytes: number
}

const STREAMS = 1_000
const CREATE_SECONDS = 5
const CREATE_ROUNDS = 2
const IDLE_STREAMS = 200
const LOG_EVENTS = 200_000
const LIST_SECONDS = 5

export const sseSection = async (options: SseOptions & {
  readonly subscribers?: number
  readonly events?: number
}): Promise<SseResult> => {
  const report = options.report
  const held = await heldSubscribers(options, options.subscribers ?? 1000, options.events ?? 20)

  const postgres = async (label: string): Promise<Store | undefined> => {
    if (options.pgUrl === undefined) return undefined
    const adminUrl = options.pgUrl
    const db = await createDatabase(adminUrl, label)
    return {
      name: "postgres",
      env: { STORE: "postgres", DATABASE_URL: db.url },
      database: { adminUrl, name: db.name },
      done: () => dropDatabase(adminUrl, db.name)
    }
  }

  // 2. Creates during 1,000 reading streams.
  report.heading(
    `SSE: creates/s on one instance without and with ${STREAMS.toLocaleString("en-US")} open streams that read every event`
  )
  const load = startLoadGenerator()
  const creates: Array<CreatesRow> = []
  const idleStreams: Array<IdleStreamsRow> = []
  try {
    const stores: Array<() => Promise<Store | undefined>> = [
      async () => ({ name: "memory", env: { STORE: "memory" }, done: async () => {} }),
      () => postgres("sse_creates")
    ]
    for (const prepare of stores) {
      const store = await prepare()
      if (store === undefined) continue
      try {
        creates.push(...await createsDuringStreams(options, store, load, { streams: STREAMS, seconds: CREATE_SECONDS, rounds: CREATE_ROUNDS }))
      } catch (error) {
        report.note(`sse creates/${store.name}: ${error instanceof Error ? error.message : String(error)}`)
      } finally {
        await store.done()
      }
    }
    report.table(
      [
        "store",
        "open streams",
        "creates/s",
        "x without (target >= 0.5)",
        "round spread",
        "create p99 ms",
        "server CPU µs/create",
        "PostgreSQL backends µs/create",
        "bench clients µs/create",
        "streams caught up (ms after)",
        "MB to the streams",
        "server writes/s",
        "not 201"
      ],
      creates.map((row) => [
        row.store,
        String(row.streams),
        fmt(row.createsPerSec),
        fmtRatio(row.ratio),
        row.ratioMin === undefined ? "" : `${fmt(row.ratioMin, 2)}-${fmt(row.ratioMax, 2)}`,
        fmt(row.p99Ms),
        fmt(row.serverCpuUsPerCreate),
        fmt(row.databaseCpuUsPerCreate),
        fmt(row.clientCpuUsPerCreate),
        fmt(row.caughtUpMs),
        fmt(row.streamMegabytes),
        fmt(row.serverWritesPerSec),
        String(row.failed)
      ])
    )
    report.say(`   autocannon, 50 connections, POST /v1/pets; medians of ${CREATE_ROUNDS} interleaved rounds of ${CREATE_SECONDS} s (x without: per`)
    report.say(`   round). With streams: ${STREAMS} SSE streams from the bench process, opened before each round at the log's end`)
    report.say("   (Last-Event-ID), each reading every event; they are closed after it. Server CPU per create: over the round, and with")
    report.say("   streams until every stream had the round's last event (the fan-out's own backlog included); the bench clients'")
    report.say("   CPU is on the same 2 cores. PostgreSQL backends: this database's backends only.")
    for (const row of creates) {
      if (row.ratio === undefined) continue
      report.say(`   ${row.store}: target (>= 0.5x) ${row.ratio >= 0.5 ? "met" : "NOT met"} (${fmtRatio(row.ratio)}).`)
      const base = creates.find((other) => other.store === row.store && other.streams === 0)
      if (base?.serverCpuUsPerCreate !== undefined && row.serverCpuUsPerCreate !== undefined) {
        const extraUs = row.serverCpuUsPerCreate - base.serverCpuUsPerCreate
        // The answers' own writes at this round's rate, taken from the writes per second.
        const streamWrites = row.serverWritesPerSec === undefined || base.serverWritesPerSec === undefined
          ? undefined
          : row.serverWritesPerSec - (base.serverWritesPerSec * row.createsPerSec) / base.createsPerSec
        const perStreamWrite = streamWrites === undefined || streamWrites <= 0
          ? undefined
          : (extraUs * row.createsPerSec) / streamWrites
        const coreShare = (extraUs * row.createsPerSec) / 1000
        report.say(
          `   ${row.store}: the fan-out's server CPU: ${fmt(extraUs)} µs per create, ${fmt((extraUs * 1000) / STREAMS)} ns per event` +
            ` frame per stream, ${fmt(coreShare)} ms per second (if each stream took the coalescing's most, 20 batches a second:` +
            ` ${fmt((coreShare * 1000) / (STREAMS * 20))} µs per stream per batch); about ${
              fmt(streamWrites === undefined ? undefined : streamWrites / STREAMS)
            } writes per stream per second (${
              fmt(streamWrites === undefined ? undefined : (row.createsPerSec * STREAMS) / streamWrites)
            } events each), ${fmt(perStreamWrite)} µs of server CPU per stream write.`
        )
      }
    }

    // 3. Streams that do not read, on a long log.
    report.heading(
      `SSE: ${IDLE_STREAMS} streams that never read, on a ${LOG_EVENTS.toLocaleString("en-US")}-event log (from event 0, and from its end)`
    )
    const longLogStores: Array<() => Promise<(Store & { seed: Omit<SeedArgs, "resultPath" | "count"> }) | undefined>> = [
      async () => {
        const store = await postgres("sse_idle")
        return store === undefined ? undefined : { ...store, seed: { store: "postgres", url: store.env["DATABASE_URL"]! } }
      },
      async () => {
        const dataDir = join(options.work, "sse-idle-pglite")
        return { name: "embedded", env: { STORE: "embedded", DATA_DIR: dataDir }, seed: { store: "embedded", dataDir }, done: async () => {} }
      }
    ]
    for (const prepare of longLogStores) {
      const store = await prepare()
      if (store === undefined) continue
      try {
        idleStreams.push(...await idleStreamsOnLongLog(options, store, load, { streams: IDLE_STREAMS, events: LOG_EVENTS, seconds: LIST_SECONDS }))
      } catch (error) {
        report.note(`sse idle streams/${store.name}: ${error instanceof Error ? error.message : String(error)}`)
      } finally {
        await store.done()
      }
    }
  } finally {
    await load.stop()
  }
  const bound = STREAM_RSS_BOUND / 1024
  const wait = `${SETTLE_WAIT_MS / 1000} s`
  report.table(
    [
      "store",
      "from",
      "streams",
      "RSS before MB",
      "RSS with MB",
      `RSS per stream KB (bound ${bound})`,
      "JS heap+external KB/stream",
      "kernel TCP KB/stream",
      "quiet after s",
      "list p50 ms: without",
      "first 5 s",
      "later",
      "list p99 ms: without",
      "first 5 s",
      "later",
      "p99 x without: first 5 s",
      "later (target <= 2)",
      "server CPU ms/s: without",
      "first 5 s",
      "later",
      "resumed stream"
    ],
    idleStreams.map((row) => [
      row.store,
      row.from === "0" ? "event 0" : "log's end",
      String(row.streams),
      fmt(mb(row.rssBeforeBytes)),
      fmt(mb(row.rssWithBytes)),
      fmt(row.rssPerStreamBytes === undefined ? undefined : row.rssPerStreamBytes / 1024),
      fmt(row.jsPerStreamBytes === undefined ? undefined : row.jsPerStreamBytes / 1024),
      fmt(row.kernelTcpPerStreamBytes === undefined ? undefined : row.kernelTcpPerStreamBytes / 1024),
      row.quietAfterMs === undefined ? `not in ${wait}` : fmt(row.quietAfterMs / 1000),
      row.listWithout.map((run) => fmt(run.p50)).join(" / "),
      fmt(row.listFirst.p50),
      fmt(row.listLater.p50),
      row.listWithout.map((run) => fmt(run.p99)).join(" / "),
      fmt(row.listFirst.p99),
      fmt(row.listLater.p99),
      fmtRatio(row.p99RatioFirst),
      fmtRatio(row.p99RatioLater),
      row.listWithout.map((run) => fmt(run.serverCpuMsPerSec)).join(" / "),
      fmt(row.listFirst.serverCpuMsPerSec),
      fmt(row.listLater.serverCpuMsPerSec),
      row.resumed === undefined ? "" : `${row.resumed.ids} ids ${row.resumed.inOrder ? "1..n in order" : "NOT in order"}`
    ])
  )
  report.say(`   the log: ${LOG_EVENTS.toLocaleString("en-US")} pets and their pet.created events written in SQL (bench/sse-seed.ts). Each stream`)
  report.say("   asks for GET /v1/events, from event 0 (after=0: the whole log ahead of it) or from the log's end (Last-Event-ID),")
  report.say("   and never reads past the response head (a paused socket). List: GET /v1/pets?limit=20 from autocannon, 2")
  report.say(`   connections, ${LIST_SECONDS} s: without = before the streams / after they closed; first 5 s = right after they opened, while the`)
  report.say("   server reads the log to fill their sockets' kernel buffers; later = once the server's CPU went quiet (under 10 ms")
  report.say(`   per 500 ms, twice: every stream waiting on its socket) or, when it did not within ${wait}, after the wait. x without =`)
  report.say("   with / the mean of the two without. Server CPU: during each list run (the list's own included). RSS with and")
  report.say("   kernel TCP: just before the later run; per stream = (with - before) / streams (embedded: the RSS includes PGlite's")
  report.say("   memory, which reading the log grows; JS heap+external, from the service's /metrics, leaves it out but counts")
  report.say("   uncollected garbage). Kernel TCP: the machine's TCP buffer memory (/proc/net/sockstat: both ends of each stream,")
  report.say("   other work included). Resumed stream: one stream read again at the end must bring the log's ids from 1, in order,")
  report.say("   none missing.")
  for (const row of idleStreams) {
    const perStream = row.rssPerStreamBytes
    const within = (bytes: number | undefined) => bytes === undefined ? "not measured" : bytes <= STREAM_RSS_BOUND ? "within" : "ABOVE"
    report.say(
      `   ${row.store} from ${row.from === "0" ? "event 0" : "the log's end"}: RSS per stream ${within(perStream)} the bound (${
        fmt(perStream === undefined ? undefined : perStream / 1024)
      } KB, bound ${bound} KB; ${
        fmt(mb(row.rssWithBytes !== undefined && row.rssBeforeBytes !== undefined ? row.rssWithBytes - row.rssBeforeBytes : undefined))
      } MB in all), JS heap+external ${within(row.jsPerStreamBytes)} it (${
        fmt(row.jsPerStreamBytes === undefined ? undefined : row.jsPerStreamBytes / 1024)
      } KB); list p99 target (<= 2x) ${row.p99RatioLater <= 2 ? "met" : "NOT met"} ${
        row.quietAfterMs === undefined ? `after ${wait}, the server still filling the sockets` : "once every stream was blocked"
      } (${fmtRatio(row.p99RatioLater)}; first 5 s: ${fmtRatio(row.p99RatioFirst)}).`
    )
  }
  return { held, creates, idleStreams, streamRssBoundBytes: STREAM_RSS_BOUND }
}
