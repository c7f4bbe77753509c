/**
 * Observability of the real process: trace export over OTLP/HTTP JSON to a receiver
 * in this test, request ids from the client to the response, the log line and the
 * server span, and the Prometheus metrics at GET /metrics.
 *
 * A service start costs seconds of CPU on a loaded machine, so the file runs few of
 * them: one traced memory service shared by the trace, request-id and metrics tests,
 * one with a custom service name, one without tracing and with METRICS=off, and one
 * on PostgreSQL when a server is reachable. Spans are judged once a later request's
 * server span has arrived too (see `drain`), so late or duplicate exports are seen.
 */
import { isRequestLine, type RequestLine } from "./LogLines.ts"
import { spawnSync } from "node:child_process"
import { createServer, type Server } from "node:http"
import { collectDefaultMetrics, Registry } from "prom-client"
import { afterAll, describe, expect, it } from "vitest"
import { createDatabase, databaseUrl, dropAllDatabases, postgresAvailable } from "./PgAdmin.ts"
import {
  eventually,
  type HttpResult,
  killAll,
  removeTempDirs,
  type ServiceProcess,
  startService,
  type StartOptions
} from "./ServiceProcess.ts"

const API_KEY = `obs-test-key-${Math.random().toString(36).slice(2)}`
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const SPAN_KIND_SERVER = 2

// ---------------------------------------------------------------------------
// A minimal OTLP/HTTP (JSON) trace receiver

interface OtlpAttribute {
  readonly key: string
  readonly value: Record<string, unknown>
}
interface OtlpSpan {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId?: string | undefined
  readonly name: string
  readonly kind: number
  readonly attributes?: ReadonlyArray<OtlpAttribute>
}
interface OtlpTraces {
  readonly resourceSpans: ReadonlyArray<{
    readonly resource?: { readonly attributes?: ReadonlyArray<OtlpAttribute> }
    readonly scopeSpans?: ReadonlyArray<{ readonly spans?: ReadonlyArray<OtlpSpan> }>
  }>
}

/** A received span with its attributes and its resource's attributes as plain values. */
interface Span {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId: string | undefined
  readonly name: string
  readonly kind: number
  readonly attributes: Readonly<Record<string, unknown>>
  readonly resource: Readonly<Record<string, unknown>>
}

interface Post {
  readonly method: string
  readonly url: string
  readonly contentType: string | undefined
  readonly body: string
}

const attributeValue = (value: Record<string, unknown>): unknown => {
  if ("stringValue" in value) return value["stringValue"]
  if ("intValue" in value) return Number(value["intValue"])
  if ("doubleValue" in value) return value["doubleValue"]
  if ("boolValue" in value) return value["boolValue"]
  return value
}

const attributesOf = (attributes: ReadonlyArray<OtlpAttribute> | undefined): Record<string, unknown> =>
  Object.fromEntries((attributes ?? []).map((attribute) => [attribute.key, attributeValue(attribute.value)]))

class OtlpReceiver {
  /** Every request the receiver got, in arrival order. */
  readonly posts: Array<Post> = []
  readonly #server: Server = createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      this.posts.push({
        method: request.method ?? "",
        url: request.url ?? "",
        contentType: request.headers["content-type"],
        body: Buffer.concat(chunks).toString("utf8")
      })
      response.writeHead(200, { "content-type": "application/json" })
      response.end("{}")
    })
  })
  port = 0

  /** Listens on loopback, on `port` or (by default) an ephemeral one. */
  static async start(port = 0): Promise<OtlpReceiver> {
    const receiver = new OtlpReceiver()
    await new Promise<void>((resolve, reject) => {
      receiver.#server.once("error", reject)
      receiver.#server.listen(port, "127.0.0.1", () => resolve())
    })
    const address = receiver.#server.address()
    if (address === null || typeof address === "string") throw new Error("no port")
    receiver.port = address.port
    return receiver
  }

  get endpoint(): string {
    return `http://127.0.0.1:${this.port}`
  }

  /** Every span received so far (throws on a body that is not OTLP JSON). */
  spans(): Array<Span> {
    const spans: Array<Span> = []
    for (const post of this.posts) {
      const traces = JSON.parse(post.body) as OtlpTraces
      for (const resourceSpans of traces.resourceSpans) {
        const resource = attributesOf(resourceSpans.resource?.attributes)
        for (const scope of resourceSpans.scopeSpans ?? []) {
          for (const span of scope.spans ?? []) {
            spans.push({
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId === undefined || span.parentSpanId === "" ? undefined : span.parentSpanId,
              name: span.name,
              kind: span.kind,
              attributes: attributesOf(span.attributes),
              resource
            })
          }
        }
      }
    }
    return spans
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.#server.closeAllConnections()
      this.#server.close(() => resolve())
    })
  }
}

const receivers: Array<OtlpReceiver> = []
const receiver = async (port?: number): Promise<OtlpReceiver> => {
  const made = await OtlpReceiver.start(port)
  receivers.push(made)
  return made
}

afterAll(async () => {
  await killAll()
  for (const made of receivers.splice(0)) await made.close()
  removeTempDirs()
  if (postgresAvailable) await dropAllDatabases()
})

/** Generous: a start is seconds of CPU, and the machine may be busy with other tests. */
const START_TIMEOUT_MS = 60_000
const TEST_TIMEOUT_MS = 90_000
/** How long a span may take from its end to the receiver (the batch delay is 100 ms). */
const EXPORT_DEADLINE_MS = 15_000

const start = (env: Readonly<Record<string, string>>): Promise<ServiceProcess> =>
  startService({ env: { API_KEYS: API_KEY, ...env }, startTimeoutMs: START_TIMEOUT_MS } satisfies StartOptions)

/** Started on first use and then shared (stopped by `afterAll`). */
const shared = <A>(make: () => Promise<A>): () => Promise<A> => {
  let made: Promise<A> | undefined
  return () => made ??= make()
}

const tracingEnv = (otlp: OtlpReceiver) => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint,
  // Milliseconds: export soon after a span ends instead of the default 5 s.
  OTEL_BSP_SCHEDULE_DELAY: "100"
})

/** The traced memory service (default service name) and its receiver. */
const traced = shared(async () => {
  const otlp = await receiver()
  const service = await start({ STORE: "memory", ...tracingEnv(otlp) })
  return { otlp, service }
})

/** A memory service without any OTEL variable and with METRICS=off. */
const plain = shared(() => start({ STORE: "memory", METRICS: "off" }))

/** `service.request`; when the request itself fails, the error tells how the service was doing. */
const call = async (service: ServiceProcess, ...args: Parameters<ServiceProcess["request"]>): Promise<HttpResult> => {
  try {
    return await service.request(...args)
  } catch (error) {
    const cause = error instanceof Error && error.cause !== undefined ? ` (cause: ${String(error.cause)})` : ""
    throw new Error(
      `${args[0]} ${args[1]} failed: ${String(error)}${cause}; service ${
        JSON.stringify(service.exitStatus ?? "still running")
      }\n${service.output}`
    )
  }
}

const unique = (tag: string) => `${tag}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`

// ---------------------------------------------------------------------------
// Span helpers

/** Whether `span` has `ancestor` somewhere up its parent chain (within the spans received). */
const descendsFrom = (spans: ReadonlyArray<Span>, span: Span, ancestor: Span): boolean => {
  const byId = new Map(spans.map((each) => [each.spanId, each]))
  let current: Span | undefined = span
  for (let depth = 0; current !== undefined && depth < 100; depth++) {
    if (current.parentSpanId === ancestor.spanId) return current.traceId === ancestor.traceId
    current = current.parentSpanId === undefined ? undefined : byId.get(current.parentSpanId)
  }
  return false
}

const describeSpans = (spans: ReadonlyArray<Span>): string =>
  spans.map((span) =>
    `${span.traceId.slice(0, 8)} ${span.spanId} <- ${span.parentSpanId ?? "(root)"} kind=${span.kind} ${span.name} ${
      JSON.stringify(span.attributes)
    }`
  ).join("\n")

const serverSpans = (spans: ReadonlyArray<Span>, requestId: string): Array<Span> =>
  spans.filter((span) => span.kind === SPAN_KIND_SERVER && span.attributes["http.request.id"] === requestId)

/** Resolves once `probe` holds for the spans received; the failure lists what did arrive. */
const spansArrive = async (
  otlp: OtlpReceiver,
  probe: (spans: Array<Span>) => boolean,
  what: string
): Promise<void> => {
  await eventually(async () => probe(otlp.spans()), EXPORT_DEADLINE_MS, what).catch((error: Error) => {
    throw new Error(`${error.message}\nreceived:\n${describeSpans(otlp.spans())}`)
  })
}

/**
 * Waits until everything that ended before now has reached the receiver: spans go out in
 * the order they end, so once a later request's server span is there, so is the rest.
 */
const drain = async (service: ServiceProcess, otlp: OtlpReceiver): Promise<void> => {
  const requestId = unique("obs-drain")
  const result = await call(service, "GET", "/v1/pets", { headers: { "x-request-id": requestId } })
  expect(result.status).toBe(401)
  await spansArrive(otlp, (spans) => serverSpans(spans, requestId).length > 0, `the server span of ${requestId}`)
}

/** The request line of the request with this id, once it is written. */
const requestLog = async (service: ServiceProcess, requestId: string): Promise<RequestLine> => {
  const find = () => service.logLines().filter(isRequestLine).find((line) => line.reqId === requestId)
  await service.waitFor(() => find() !== undefined, 10_000, `the log line of request ${requestId}`)
  return find()!
}

// ---------------------------------------------------------------------------
// Traces

/**
 * Creates a pet with a chosen request id and checks its trace: one server span with the
 * id, and below it (by parentSpanId, in the same trace) the authorization, key check and
 * store spans, and with `sql` a PostgreSQL query span below the store span.
 */
const checkCreateTrace = async (service: ServiceProcess, otlp: OtlpReceiver, sql: boolean): Promise<void> => {
  const requestId = unique("obs-trace")
  const created = await call(service, "POST", "/v1/pets", {
    apiKey: API_KEY,
    body: { name: "Traced", categoryId: 3 },
    headers: { "x-request-id": requestId }
  })
  expect(created.status, created.text).toBe(201)
  expect(created.headers.get("x-request-id")).toBe(requestId)

  const isSql = (span: Span) => span.attributes["db.system.name"] === "postgresql"
  // Exported while the service runs, soon after the request.
  await spansArrive(otlp, (spans) => {
    const server = serverSpans(spans, requestId)[0]
    if (server === undefined) return false
    const create = spans.find((span) => span.name === "PetRepository.create" && span.traceId === server.traceId)
    if (create === undefined || !descendsFrom(spans, create, server)) return false
    return !sql || spans.some((span) => isSql(span) && descendsFrom(spans, span, create))
  }, `the spans of request ${requestId}`)
  await drain(service, otlp)

  const spans = otlp.spans()
  const context = `request ${requestId}, received:\n${describeSpans(spans)}`

  const servers = serverSpans(spans, requestId)
  expect(servers.length, context).toBe(1)
  const server = servers[0]!
  expect(server.traceId, context).toMatch(/^[0-9a-f]{32}$/)
  expect(server.parentSpanId, context).toBeUndefined()
  expect(server.attributes["http.request.method"]).toBe("POST")
  expect(server.attributes["http.response.status_code"]).toBe(201)
  expect(server.attributes["http.route"]).toBe("/v1/pets")

  // Everything in the trace hangs below the server span, each span once.
  const trace = spans.filter((span) => span.traceId === server.traceId)
  expect(new Set(trace.map((span) => span.spanId)).size, context).toBe(trace.length)
  for (const span of trace) {
    if (span !== server) expect(descendsFrom(spans, span, server), `${span.name} below the server span\n${context}`).toBe(true)
  }
  for (const name of ["Authorization.bearerAuth", "ApiKeys.verify", "PetRepository.create"]) {
    expect(trace.filter((span) => span.name === name).length, `${name} in the trace\n${context}`).toBe(1)
  }
  // No create lost its request: every one received belongs to a server span's trace.
  for (const span of spans.filter((each) => each.name === "PetRepository.create")) {
    const root = spans.find((each) => each.kind === SPAN_KIND_SERVER && each.traceId === span.traceId)
    expect(root !== undefined && descendsFrom(spans, span, root), `${span.name} ${span.spanId} has a server span\n${context}`)
      .toBe(true)
  }

  if (sql) {
    const create = trace.find((span) => span.name === "PetRepository.create")!
    const queries = trace.filter((span) => isSql(span) && descendsFrom(spans, span, create))
    expect(queries.length, context).toBeGreaterThanOrEqual(1)
    expect(
      queries.some((span) => /\binsert\s+into\s+pets\b/i.test(String(span.attributes["db.query.text"] ?? ""))),
      `an INSERT below PetRepository.create\n${context}`
    ).toBe(true)
  }

  for (const post of otlp.posts) {
    expect(post.method).toBe("POST")
    expect(post.url).toBe("/v1/traces")
    expect(post.contentType ?? "").toMatch(/^application\/json/)
  }
}

describe("trace export over OTLP/HTTP JSON", () => {
  it("memory: a request's spans form one trace under the server span that carries its id", async () => {
    const { otlp, service } = await traced()
    await checkCreateTrace(service, otlp, false)
    for (const span of otlp.spans()) expect(span.resource["service.name"]).toBe("animal-store")
  }, TEST_TIMEOUT_MS)

  it.runIf(postgresAvailable)(
    "postgres: the same, with the SQL query span below PetRepository.create",
    async () => {
      const otlp = await receiver()
      const service = await start({
        STORE: "postgres",
        DATABASE_URL: databaseUrl(await createDatabase()),
        // Extra attributes without a service.name keep the default name.
        OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=obs-test",
        ...tracingEnv(otlp)
      })
      await checkCreateTrace(service, otlp, true)
      for (const span of otlp.spans()) {
        expect(span.resource["service.name"]).toBe("animal-store")
        expect(span.resource["deployment.environment"]).toBe("obs-test")
      }
      expect(await service.stop()).toEqual({ code: 0, signal: null })
    },
    TEST_TIMEOUT_MS
  )

  it("OTEL_SERVICE_NAME names the resource, over a service.name in OTEL_RESOURCE_ATTRIBUTES", async () => {
    const otlp = await receiver()
    const service = await start({
      STORE: "memory",
      OTEL_SERVICE_NAME: "custom",
      OTEL_RESOURCE_ATTRIBUTES: "service.name=overridden,deployment.environment=obs-test",
      ...tracingEnv(otlp)
    })
    await drain(service, otlp)
    expect(await service.stop()).toEqual({ code: 0, signal: null })
    const spans = otlp.spans()
    expect(spans.length).toBeGreaterThan(0)
    for (const span of spans) {
      expect(span.resource["service.name"], describeSpans([span])).toBe("custom")
      expect(span.resource["deployment.environment"]).toBe("obs-test")
    }
  }, TEST_TIMEOUT_MS)
})

// ---------------------------------------------------------------------------
// Request ids

describe("request ids", () => {
  it("a sane client id is echoed, logged and on the server span; a missing or insane one becomes a fresh UUID", async () => {
    const { otlp, service } = await traced()
    /** Every id the service answered with, in order. */
    const answered: Array<string> = []
    const send = async (
      method: string,
      path: string,
      status: number,
      options: { apiKey?: string; body?: unknown; requestId?: string } = {}
    ) => {
      const result = await call(service, method, path, {
        ...(options.apiKey === undefined ? {} : { apiKey: options.apiKey }),
        ...(options.body === undefined ? {} : { body: options.body }),
        headers: options.requestId === undefined ? {} : { "x-request-id": options.requestId }
      })
      expect(result.status, `${method} ${path}: ${result.text}`).toBe(status)
      const requestId = result.headers.get("x-request-id")
      expect(requestId, `${method} ${path}: x-request-id`).not.toBeNull()
      answered.push(requestId!)
      return { requestId: requestId!, log: await requestLog(service, requestId!) }
    }

    // Every character the rule allows, and the longest id allowed: kept as they are.
    const sane = [unique("Obs-1.2_3:4+5/6=7@8"), "x".repeat(127) + "Z"]
    for (const requestId of sane) {
      const { requestId: echoed, log } = await send("POST", "/v1/pets", 201, {
        apiKey: API_KEY,
        body: { name: "Identified", categoryId: 2 },
        requestId
      })
      expect(echoed).toBe(requestId)
      expect(log).toMatchObject({
        reqId: requestId,
        req: { method: "POST", url: "/v1/pets" },
        res: { statusCode: 201 },
        route: "/v1/pets"
      })
    }
    // Error answers carry it too: no key, an unknown route, a missing pet.
    const errors = [
      ["/v1/pets", undefined, 401],
      ["/no/such/route", API_KEY, 404],
      ["/v1/pets/987654321", API_KEY, 404]
    ] as const
    for (const [path, apiKey, status] of errors) {
      const requestId = unique(`obs-err-${status}`)
      const { requestId: echoed, log } = await send("GET", path, status, { ...(apiKey === undefined ? {} : { apiKey }), requestId })
      expect(echoed).toBe(requestId)
      expect(log).toMatchObject({ req: { url: path }, res: { statusCode: status }, reqId: requestId })
    }

    // No id: a fresh UUID each time, the same in the header and the log line.
    const fresh = [await send("GET", "/v1/pets", 200, { apiKey: API_KEY }), await send("GET", "/v1/pets", 200, { apiKey: API_KEY })]
    for (const { requestId, log } of fresh) {
      expect(requestId).toMatch(UUID)
      expect(log).toMatchObject({ req: { url: "/v1/pets" }, res: { statusCode: 200 } })
    }
    expect(fresh[0]!.requestId).not.toBe(fresh[1]!.requestId)

    // Insane ids are replaced, and never echoed, logged or put on a span.
    const insane = [
      "a".repeat(200),
      "x".repeat(128) + "Z", // 129 characters
      "has space",
      "quote\"d",
      "semi;colon",
      "back\\slash",
      "<tag>"
    ]
    const replaced: Array<string> = []
    for (const requestId of insane) {
      const { requestId: replacement, log } = await send("GET", "/v1/pets", 200, { apiKey: API_KEY, requestId })
      expect(replacement, JSON.stringify(requestId)).toMatch(UUID)
      expect(log).toMatchObject({ req: { url: "/v1/pets" }, res: { statusCode: 200 } })
      replaced.push(replacement)
    }

    // Every id answered is on exactly one log line and exactly one server span.
    await spansArrive(
      otlp,
      (spans) => answered.every((requestId) => serverSpans(spans, requestId).length > 0),
      "a server span for every request id"
    )
    await drain(service, otlp)
    const spans = otlp.spans()
    const logged = service.logLines()
      .filter(isRequestLine)
      .map((line) => line.reqId)
    expect(new Set(answered).size).toBe(answered.length)
    for (const requestId of answered) {
      expect(logged.filter((id) => id === requestId).length, `log lines of ${requestId}`).toBe(1)
      expect(serverSpans(spans, requestId).length, `server spans of ${requestId}\n${describeSpans(spans)}`).toBe(1)
    }
    const everything = service.stdout + service.stderr + otlp.posts.map((post) => post.body).join("\n")
    for (const requestId of insane) {
      expect(logged).not.toContain(requestId)
      expect(spans.some((span) => span.attributes["http.request.id"] === requestId)).toBe(false)
    }
    expect(everything).not.toContain("a".repeat(200))
    expect(everything).not.toContain("has space")
    expect(everything).not.toContain("semi;colon")
  }, TEST_TIMEOUT_MS)
})

// ---------------------------------------------------------------------------
// Metrics

interface Sample {
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
  readonly value: number
}

/** The samples of a Prometheus text exposition (comments skipped). */
const parsePrometheus = (text: string): Array<Sample> => {
  const samples: Array<Sample> = []
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/.exec(line)
    if (match === null) throw new Error(`not a Prometheus sample line: ${JSON.stringify(line)}`)
    const labels: Record<string, string> = {}
    for (const label of (match[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[label[1]!] = label[2]!
    }
    const raw = match[3]!
    const value = raw === "+Inf" ? Infinity : raw === "-Inf" ? -Infinity : Number(raw)
    samples.push({ name: match[1]!, labels, value })
  }
  return samples
}

/** The value of the one sample with exactly these labels; the failure lists the samples of that name. */
const sampleValue = (
  samples: ReadonlyArray<Sample>,
  name: string,
  labels: Readonly<Record<string, string>> = {}
): number => {
  const key = (entries: Readonly<Record<string, string>>) => JSON.stringify(Object.entries(entries).sort())
  const found = samples.filter((sample) => sample.name === name && key(sample.labels) === key(labels))
  if (found.length !== 1) {
    const present = samples.filter((sample) => sample.name === name)
      .map((sample) => `  ${name}${JSON.stringify(sample.labels)} ${sample.value}`)
    throw new Error(
      `${name}${JSON.stringify(labels)} appears ${found.length} times; the samples of ${name}:\n${
        present.join("\n") || "  (none)"
      }`
    )
  }
  return found[0]!.value
}

/** prom-client's default metrics (a devDependency, read for their names and types only): name → type. */
const promClientDefaults = async (): Promise<Map<string, string>> => {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  return new Map((await registry.getMetricsAsJSON()).map((metric) => [metric.name, String(metric.type)]))
}

const onCi = process.env["CI"] === "true"
const promtool = spawnSync("promtool", ["--version"], { stdio: "ignore" }).status === 0
if (!promtool && !onCi) {
  console.warn("SKIPPED: `promtool check metrics` needs promtool (apt-get install -y --no-install-recommends prometheus)")
}

const scrape = async (service: ServiceProcess): Promise<Array<Sample>> => {
  const result = await call(service, "GET", "/metrics")
  expect(result.status, result.text).toBe(200)
  expect(result.headers.get("content-type") ?? "").toMatch(/^text\/plain/)
  return parsePrometheus(result.text)
}

describe("GET /metrics", () => {
  it("serves request, rejection, store and process series without a key, counting each request once", async () => {
    const { service } = await traced()
    const traffic = async () => {
      const created = await call(service, "POST", "/v1/pets", { apiKey: API_KEY, body: { name: "Counted", categoryId: 4 } })
      expect(created.status, created.text).toBe(201)
      expect((await call(service, "GET", "/v1/pets/987654321", { apiKey: API_KEY })).status).toBe(404)
      expect((await call(service, "GET", "/v1/pets")).status).toBe(401)
    }
    const series = {
      created: ["http_server_requests_total", { operation: "createPet", method: "POST", status: "201" }],
      missing: ["http_server_requests_total", { operation: "getPet", method: "GET", status: "404" }],
      unauthorized: ["http_server_rejections_total", { reason: "unauthorized" }],
      storeCreate: ["store_calls_total", { port: "PetRepository", method: "create", outcome: "ok" }],
      storeMissing: ["store_calls_total", { port: "PetRepository", method: "get", outcome: "not_found" }],
      createDurations: ["http_server_request_duration_seconds_count", { operation: "createPet" }],
      storeCreateDurations: ["store_call_duration_seconds_count", { port: "PetRepository", method: "create" }]
    } as const

    await traffic()
    const first = await scrape(service)
    for (const [key, [name, labels]] of Object.entries(series)) {
      expect(sampleValue(first, name, labels), key).toBeGreaterThanOrEqual(1)
    }
    expect(sampleValue(first, "process_resident_memory_bytes")).toBeGreaterThan(0)
    expect(sampleValue(first, "nodejs_heap_size_used_bytes")).toBeGreaterThan(0)
    for (const quantile of ["p50", "p90", "p99", "max"]) {
      expect(sampleValue(first, `nodejs_eventloop_lag_${quantile}_seconds`), quantile).toBeGreaterThanOrEqual(0)
    }

    // Nothing else talks to this service meanwhile: one more round adds exactly one each.
    await traffic()
    const second = await scrape(service)
    for (const [key, [name, labels]] of Object.entries(series)) {
      expect(sampleValue(second, name, labels), key).toBe(sampleValue(first, name, labels) + 1)
    }
  }, TEST_TIMEOUT_MS)

  it("serves the standard process series under prom-client's default names and types", async () => {
    const { service } = await traced()
    const standard = await promClientDefaults()
    const typeOf = (text: string) =>
      new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((match) => [match[1]!, match[2]!]))

    // Traffic until V8 has collected at least once since the service started watching.
    await eventually(async () => {
      for (let i = 0; i < 50; i++) {
        await call(service, "POST", "/v1/pets", { apiKey: API_KEY, body: { name: `gc-${"x".repeat(200)}-${i}`, categoryId: 5 } })
      }
      return parsePrometheus((await call(service, "GET", "/metrics")).text)
        .some((sample) => sample.name === "nodejs_gc_duration_seconds_count" && sample.value > 0)
    }, 60_000, "a garbage collection counted in nodejs_gc_duration_seconds", 0)

    const text = (await call(service, "GET", "/metrics")).text
    const types = typeOf(text)
    const dashboards = {
      process_cpu_seconds_total: "counter",
      process_resident_memory_bytes: "gauge",
      nodejs_eventloop_lag_seconds: "gauge",
      nodejs_heap_size_used_bytes: "gauge",
      nodejs_gc_duration_seconds: "histogram"
    }
    for (const [name, type] of Object.entries(dashboards)) {
      expect(standard.get(name), `prom-client's ${name}`).toBe(type)
      expect(types.get(name), name).toBe(type)
    }
    // Every process or Node.js series is one of prom-client's, of its type: no near-miss names.
    const ours = [...types].filter(([name]) => /^(process|nodejs)_/.test(name))
    expect(ours.filter(([name, type]) => standard.get(name) !== type)).toEqual([])

    const samples = parsePrometheus(text)
    const cpu = sampleValue(samples, "process_cpu_seconds_total")
    expect(cpu).toBeGreaterThan(0)
    expect(cpu).toBeCloseTo(
      sampleValue(samples, "process_cpu_user_seconds_total") + sampleValue(samples, "process_cpu_system_seconds_total"),
      6
    )
    expect(sampleValue(samples, "process_resident_memory_bytes")).toBeGreaterThan(sampleValue(samples, "nodejs_heap_size_used_bytes"))
    expect(sampleValue(samples, "nodejs_heap_size_used_bytes")).toBeLessThanOrEqual(sampleValue(samples, "nodejs_heap_size_total_bytes"))
    expect(sampleValue(samples, "nodejs_eventloop_lag_seconds")).toBeGreaterThanOrEqual(0)
    const started = sampleValue(samples, "process_start_time_seconds")
    expect(started).toBeGreaterThan(Date.now() / 1000 - 600)
    expect(started).toBeLessThanOrEqual(Date.now() / 1000)
    const gc = samples.filter((sample) => sample.name === "nodejs_gc_duration_seconds_bucket")
    // A kind appears once V8 has done a collection of that kind, as with prom-client.
    const kinds = [...new Set(gc.map((sample) => sample.labels["kind"]))]
    expect(kinds.length).toBeGreaterThan(0)
    expect(kinds.filter((kind) => !["major", "minor", "incremental", "weakcb"].includes(kind!))).toEqual([])
    expect([...new Set(gc.map((sample) => sample.labels["le"]))]).toEqual(["0.001", "0.01", "0.1", "1", "2", "5", "+Inf"])
  }, TEST_TIMEOUT_MS)

  it.skipIf(!promtool && !onCi)("promtool check metrics finds nothing to say about /metrics", async () => {
    expect(promtool, "promtool is required on CI (apt-get install -y prometheus)").toBe(true)
    const { service } = await traced()
    const text = (await call(service, "GET", "/metrics")).text
    const checked = spawnSync("promtool", ["check", "metrics"], { input: text, encoding: "utf8" })
    expect({ status: checked.status, stdout: checked.stdout, stderr: checked.stderr }).toEqual({
      status: 0,
      stdout: "",
      stderr: ""
    })
  }, TEST_TIMEOUT_MS)

  it("METRICS=off: /metrics is a 404 with the JSON Error body", async () => {
    const service = await plain()
    for (const apiKey of [undefined, API_KEY]) {
      const result = await call(service, "GET", "/metrics", apiKey === undefined ? {} : { apiKey })
      expect(result.status, result.text).toBe(404)
      expect(result.headers.get("content-type") ?? "").toMatch(/^application\/json/)
      expect(result.json).toMatchObject({ code: "not_found", status: 404 })
      expect(typeof (result.json as { message?: unknown }).message).toBe("string")
    }
    expect((await call(service, "GET", "/v1/pets", { apiKey: API_KEY })).status).toBe(200)
  }, TEST_TIMEOUT_MS)
})

// ---------------------------------------------------------------------------
// No export without an endpoint

describe("without OTEL_EXPORTER_OTLP_ENDPOINT", () => {
  it("sends no trace anywhere, not even to the default OTLP port", async () => {
    // On the default OTLP/HTTP port when it is free, so an exporter falling back to it is caught.
    const otlp = await receiver(4318).catch(() => receiver())
    const service = await plain()
    const created = await call(service, "POST", "/v1/pets", { apiKey: API_KEY, body: { name: "Untraced", categoryId: 1 } })
    expect(created.status, created.text).toBe(201)
    expect((await call(service, "GET", "/v1/pets")).status).toBe(401)
    // A graceful stop flushes whatever an exporter holds: after it, silence is conclusive.
    expect(await service.stop()).toEqual({ code: 0, signal: null })
    expect(otlp.posts.map((post) => `${post.method} ${post.url}: ${post.body.slice(0, 300)}`)).toEqual([])
    expect(service.stderr).toBe("")
  }, TEST_TIMEOUT_MS)
})
