/**
 * The event feed of the real process over real HTTP, on every store: pages, Server-Sent
 * Events with resume and heartbeat, clients that leave, the cap on streams held at once,
 * and the outbox's durability (every acknowledged create has its event after kill -9).
 */
import { afterAll, describe, expect, it } from "vitest"
import * as Path from "node:path"
import { cleanUpProcesses } from "./Cleanup.ts"
import { createKey, keysCli } from "./KeysCli.ts"
import { createDatabase, databaseUrl, postgresAvailable } from "./PgAdmin.ts"
import {
  createPet,
  eventually,
  mapConcurrent,
  newPet,
  type PetJson,
  type ServiceProcess,
  startService,
  tempDir
} from "./ServiceProcess.ts"

const API_KEY = "events-test-key"

cleanUpProcesses()

interface EventJson {
  readonly id: number
  readonly type: string
  readonly occurredAt: string
  readonly data: PetJson
}

interface Frame {
  readonly id?: string
  readonly event?: string
  readonly data?: string
  readonly comment?: string
}

/** An SSE client over fetch: reads frames as they arrive, until closed. */
const subscribe = async (service: ServiceProcess, headers: Record<string, string> = {}, query = "") => {
  const abort = new AbortController()
  const response = await fetch(`${service.baseUrl}/v1/events${query}`, {
    headers: { authorization: `Bearer ${API_KEY}`, accept: "text/event-stream", ...headers },
    signal: abort.signal
  })
  const frames: Array<Frame> = []
  const waiting = new Set<() => void>()
  const reading = (async () => {
    const decoder = new TextDecoder()
    let buffer = ""
    try {
      for await (const chunk of response.body!) {
        buffer += decoder.decode(chunk as Uint8Array, { stream: true })
        for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
          const frame: Record<string, string> = {}
          for (const line of buffer.slice(0, end).split("\n")) {
            if (line.startsWith(":")) frame["comment"] = line.slice(1).trim()
            else frame[line.slice(0, line.indexOf(":"))] = line.slice(line.indexOf(":") + 1).trim()
          }
          frames.push(frame)
          buffer = buffer.slice(end + 2)
          for (const wake of waiting) wake()
        }
      }
    } catch {
      // aborted by close()
    }
  })()
  const events = () => frames.filter((frame) => frame.event !== undefined)
  return {
    response,
    frames,
    events,
    /** Settles when the stream has ended (the server closed it) or was closed. */
    reading,
    /** Waits until `count` events (or a frame matching `until`) have arrived. */
    waitFor: (until: (frames: ReadonlyArray<Frame>) => boolean, timeoutMs = 10_000) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (until(frames)) {
            waiting.delete(check)
            clearTimeout(timer)
            resolve()
          }
        }
        const timer = setTimeout(() => {
          waiting.delete(check)
          reject(new Error(`timed out; frames so far: ${JSON.stringify(frames)}`))
        }, timeoutMs)
        waiting.add(check)
        check()
      }),
    close: async () => {
      abort.abort()
      await reading
    }
  }
}

/** Every event through the pages, following Link rel="next". */
const readFeed = async (service: ServiceProcess, query = "?limit=50") => {
  const events: Array<EventJson> = []
  let path: string | undefined = `/v1/events${query}`
  while (path !== undefined) {
    const result = await service.request("GET", path, { apiKey: API_KEY })
    expect(result.status).toBe(200)
    events.push(...result.json as Array<EventJson>)
    const link = result.headers.get("link")
    path = link === null ? undefined : /<([^>]+)>/.exec(link)![1]!
  }
  return events
}

const stores: ReadonlyArray<readonly [string, () => Promise<Record<string, string>>, boolean]> = [
  ["memory", async () => ({ STORE: "memory" }), true],
  ["embedded", async () => ({ STORE: "embedded", DATA_DIR: Path.join(tempDir(), "data") }), true],
  ["postgres", async () => ({ STORE: "postgres", DATABASE_URL: databaseUrl(await createDatabase()) }), postgresAvailable]
]

for (const [name, env, available] of stores) {
  describe.skipIf(!available)(`event feed: ${name}`, () => {
    let service: ServiceProcess
    afterAll(async () => {
      await service?.stop()
    })

    it("streams each change as an SSE event, resumes after Last-Event-ID, sends heartbeats, and survives clients that leave", async () => {
      service = await startService({
        env: { API_KEYS: API_KEY, EVENTS_HEARTBEAT: "300 millis", ...(await env()) },
        startTimeoutMs: 60_000
      })
      const first = await subscribe(service)
      expect(first.response.status).toBe(200)
      expect(first.response.headers.get("content-type")).toMatch(/^text\/event-stream/)
      // Subscribers that leave at once, mid-stream, must cost nothing later.
      const leaving = await Promise.all(Array.from({ length: 20 }, () => subscribe(service)))
      await Promise.all(leaving.map((client) => client.close()))

      const created = [] as Array<PetJson>
      for (let i = 0; i < 3; i++) created.push(await createPet(service, API_KEY, newPet(i, "sse")))
      await first.waitFor(() => first.events().length >= 3)
      const received = first.events().map((frame) => ({ ...frame, json: JSON.parse(frame.data!) as EventJson }))
      expect(received.map((frame) => frame.event)).toEqual(["pet.created", "pet.created", "pet.created"])
      expect(received.map((frame) => frame.json.data)).toEqual(created)
      expect(received.map((frame) => frame.id)).toEqual(received.map((frame) => String(frame.json.id)))
      // Idle now: heartbeats keep the stream open.
      await first.waitFor((frames) => frames.some((frame) => frame.comment === "heartbeat"), 5_000)
      await first.close()

      // Resumed after the last event seen: only what came after.
      const later = [await createPet(service, API_KEY, newPet(3, "sse")), await createPet(service, API_KEY, newPet(4, "sse"))]
      const resumed = await subscribe(service, { "last-event-id": received[2]!.id! })
      await resumed.waitFor(() => resumed.events().length >= 2)
      await new Promise((resolve) => setTimeout(resolve, 500))
      expect(resumed.events().map((frame) => (JSON.parse(frame.data!) as EventJson).data)).toEqual(later)
      await resumed.close()

      // The pages hold the same events, in the same order; a type filter keeps them.
      const feed = await readFeed(service, "?limit=2")
      expect(feed.map((event) => event.data)).toEqual([...created, ...later])
      expect((await readFeed(service, "?type=order.placed")).length).toBe(0)
      const bad = await service.request("GET", "/v1/events?type=pet.eaten", { apiKey: API_KEY })
      expect(bad.status).toBe(400)
    }, 120_000)

    // The memory store's keys are API_KEYS alone, which nothing revokes.
    it.skipIf(name === "memory")("revoking a key ends its open stream: no event written after the revocation reaches it", async () => {
      const serviceEnv = await env()
      const service = await startService({
        env: { API_KEYS: API_KEY, EVENTS_HEARTBEAT: "300 millis", ...serviceEnv },
        startTimeoutMs: 60_000
      })
      const key = await createKey(serviceEnv, "--name", "streaming-reader", "--scope", "read")
      const stream = await subscribe(service, { authorization: `Bearer ${key}` })
      expect(stream.response.status).toBe(200)
      await createPet(service, API_KEY, newPet(10, "before-revocation"))
      await stream.waitFor(() => stream.events().length >= 1)
      const revoked = await keysCli(["revoke", "streaming-reader"], serviceEnv)
      expect(revoked.code, revoked.stderr).toBe(0)
      // Once the instance has seen the revocation (a new request is refused)...
      await eventually(
        async () => (await service.request("GET", "/v1/pets", { apiKey: key })).status === 401,
        10_000,
        "the revoked key refused"
      )
      const seen = stream.events().length
      for (let i = 0; i < 5; i++) await createPet(service, API_KEY, newPet(20 + i, "after-revocation"))
      // ...the stream ends at its next event or heartbeat (every 300 ms here), having sent none of them.
      const ended = await Promise.race([
        stream.reading.then(() => true),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 5_000))
      ])
      expect(ended, JSON.stringify(stream.frames)).toBe(true)
      expect(stream.events().length).toBe(seen)
      await stream.close()
      await service.stop()
    }, 120_000)

    it("a stream without a cursor starts at the log's end; with after=0, at the oldest kept event", async () => {
      const fresh = await startService({ env: { API_KEYS: API_KEY, ...(await env()) }, startTimeoutMs: 60_000 })
      const before = [await createPet(fresh, API_KEY, newPet(30, "old")), await createPet(fresh, API_KEY, newPet(31, "old"))]
      const live = await subscribe(fresh)
      const all = await subscribe(fresh, {}, "?after=0")
      await live.waitFor((frames) => frames.some((frame) => frame.comment === "connected"))
      const after = await createPet(fresh, API_KEY, newPet(32, "new"))
      await live.waitFor(() => live.events().length >= 1)
      await all.waitFor(() => all.events().length >= 3)
      await new Promise((resolve) => setTimeout(resolve, 300))
      expect(live.events().map((frame) => (JSON.parse(frame.data!) as EventJson).data)).toEqual([after])
      expect(all.events().map((frame) => (JSON.parse(frame.data!) as EventJson).data)).toEqual([...before, after])
      await Promise.all([live.close(), all.close()])
      await fresh.stop()
    }, 120_000)

    it("a SIGTERM ends open streams at once instead of waiting out the drain", async () => {
      const stopping = await startService({ env: { API_KEYS: API_KEY, ...(await env()) }, startTimeoutMs: 60_000 })
      const clients = await Promise.all([subscribe(stopping), subscribe(stopping)])
      for (const client of clients) await client.waitFor((frames) => frames.some((frame) => frame.comment === "connected"))
      const { exit, exitMs } = await stopping.exitTimed("SIGTERM", 15_000)
      expect(exit, stopping.output).toEqual({ code: 0, signal: null })
      // The drain allows 10 s (DRAIN_TIMEOUT); streams no longer hold it.
      expect(exitMs, stopping.output).toBeLessThan(5_000)
      await Promise.all(clients.map((client) => client.close()))
    }, 60_000)
  })
}

describe("event streams: at most EVENTS_MAX_STREAMS at once", () => {
  it("refuses a stream beyond the cap with 503 and Retry-After, and takes one again once a stream closes", async () => {
    const service = await startService({ env: { API_KEYS: API_KEY, STORE: "memory", EVENTS_MAX_STREAMS: "3" } })
    const clients: Array<Awaited<ReturnType<typeof subscribe>>> = []
    try {
      const open = await Promise.all([subscribe(service), subscribe(service), subscribe(service)])
      clients.push(...open)
      for (const client of open) expect(client.response.status).toBe(200)

      const refused = await fetch(`${service.baseUrl}/v1/events`, {
        headers: { authorization: `Bearer ${API_KEY}`, accept: "text/event-stream" }
      })
      expect(refused.status).toBe(503)
      expect(refused.headers.get("retry-after")).toBe("5")
      expect(await refused.json()).toEqual({
        code: "service_unavailable",
        message: "this instance already serves its 3 event streams; retry later",
        status: 503
      })
      // The cap is on streams only: pages are served as before.
      expect((await service.request("GET", "/v1/events", { apiKey: API_KEY })).status).toBe(200)

      await open[0]!.close()
      // The place frees up once the service sees the connection close.
      let admitted: Awaited<ReturnType<typeof subscribe>> | undefined
      await eventually(async () => {
        const attempt = await subscribe(service)
        clients.push(attempt)
        if (attempt.response.status === 200) admitted = attempt
        return admitted !== undefined
      }, 5_000, "a stream taken after one closed", 50)
      await admitted!.waitFor((frames) => frames.some((frame) => frame.comment === "connected"))
      // Refusals held no place: the cap is full again.
      const again = await subscribe(service)
      clients.push(again)
      expect(again.response.status).toBe(503)
    } finally {
      await Promise.all(clients.map((client) => client.close()))
      await service.stop()
    }
  }, 60_000)
})

const durable: ReadonlyArray<readonly [string, () => Promise<Record<string, string>>, boolean]> = stores.slice(1)

for (const [name, env, available] of durable) {
  describe.skipIf(!available)(`outbox durability: ${name}`, () => {
    it("every create acknowledged before kill -9 has its pet.created event after the restart", async () => {
      const settings = { API_KEYS: API_KEY, ...(await env()) }
      const first = await startService({ env: settings, startTimeoutMs: 60_000 })
      const acknowledged: Array<PetJson> = []
      let killed: Promise<unknown> | undefined
      await mapConcurrent(Array.from({ length: 150 }, (_, i) => i), 20, async (i) => {
        try {
          acknowledged.push(await createPet(first, API_KEY, newPet(i, "kill")))
          if (acknowledged.length === 60) killed = first.kill9()
        } catch {
          // cut off by the kill: not acknowledged
        }
      })
      await killed
      expect(acknowledged.length).toBeGreaterThanOrEqual(60)
      const second = await startService({ env: settings, startTimeoutMs: 60_000 })
      try {
        const feed = await readFeed(second, "?limit=100&type=pet.created")
        const evented = new Map(feed.map((event) => [event.data.id, event.data]))
        for (const pet of acknowledged) expect(evented.get(pet.id)).toEqual(pet)
        // No event without its pet, and ids strictly ascending.
        const ids = feed.map((event) => event.id)
        expect(ids).toEqual([...ids].sort((a, b) => a - b))
        for (const event of feed) {
          expect((await second.request("GET", `/v1/pets/${event.data.id}`, { apiKey: API_KEY })).status).toBe(200)
        }
      } finally {
        await second.stop()
      }
    }, 180_000)
  })
}
