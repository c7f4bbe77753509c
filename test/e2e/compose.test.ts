/**
 * The stack in one file (compose.yaml), its Prometheus configuration and the list of
 * every setting (.env.example), checked without a container engine (these machines have
 * none): the instances' settings decode with the service's own configuration, every
 * setting they and .env.example name is one the README documents, with its default, and
 * the pieces point at each other (database credentials, ports, scrape targets).
 */
import { Yaml } from "@stoplight/spectral-parsers"
import { ConfigProvider, Effect, Option, Redacted } from "effect"
import { execFileSync, spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { describe, expect, it } from "vitest"
import { ServiceConfig } from "../../src/programs/ServiceConfig.ts"
import { StoreConfig } from "../../src/programs/StoreConfig.ts"
import { repoRoot } from "./ServiceProcess.ts"

const read = (file: string) => Fs.readFileSync(Path.join(repoRoot, file), "utf8")

interface ComposeService {
  readonly build?: string
  readonly image?: string
  readonly environment?: Record<string, string>
  readonly ports?: ReadonlyArray<string>
  readonly depends_on?: Record<string, { readonly condition: string }>
  readonly volumes?: ReadonlyArray<string>
}

const compose = () => {
  const parsed = Yaml.parse(read("compose.yaml"))
  expect(parsed.diagnostics).toEqual([])
  return parsed.data as { readonly services: Record<string, ComposeService> }
}

/** `NAME` → the README's default column, for every row of the configuration table. */
const documented = (): ReadonlyMap<string, string> => {
  const rows = read("README.md").matchAll(/^\| `([A-Z][A-Z0-9_]+)` \| ([^|]+) \|/gm)
  return new Map(Array.from(rows, ([, name, fallback]) => [name!, fallback!.trim()]))
}

/** `NAME` → the value .env.example gives it (commented out, as each is a default). */
const examples = (): ReadonlyMap<string, string> => {
  const lines = read(".env.example").matchAll(/^# ([A-Z][A-Z0-9_]+)=(.*)$/gm)
  return new Map(Array.from(lines, ([, name, value]) => [name!, value!.replace(/\s{2,}\(.*\)$/, "").trim()]))
}

// The settings of the OpenTelemetry specification beyond the endpoint (README: "The other standard OTEL_* variables apply").
const isOtel = (name: string) => name.startsWith("OTEL_")

const decode = (env: Record<string, string>) =>
  Effect.runPromise(
    Effect.all({ store: StoreConfig, service: ServiceConfig }).pipe(
      Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env }))
    )
  )

describe(".env.example", () => {
  it("lists every documented setting with the README's default, and nothing else", () => {
    const readme = documented()
    const example = examples()
    expect([...example.keys()].filter((name) => !isOtel(name)).sort()).toEqual([...readme.keys()].filter((name) => !isOtel(name)).sort())
    for (const [name, value] of example) {
      if (isOtel(name)) continue
      const fallback = readme.get(name)!
      // A literal default in the README (`8080`) is the example's value; "(none)" an empty one.
      const literal = /^`([^`]*)`/.exec(fallback)?.[1]
      if (fallback.startsWith("(none)")) expect(value, name).toBe("")
      else if (literal !== undefined && !fallback.includes(" if ")) expect(value, name).toBe(literal)
    }
  })

  it("its values, uncommented, are a configuration the service accepts", async () => {
    const env = Object.fromEntries([...examples()].filter(([, value]) => value !== ""))
    const { service, store } = await decode(env)
    expect(store.store).toBe("embedded")
    expect(service.port).toBe(8080)
  })
})

describe("compose.yaml", () => {
  const instances = () => Object.entries(compose().services).filter(([, service]) => service.build === ".")

  it("runs two instances of the image on one PostgreSQL, with Redis, a trace collector and Prometheus", () => {
    const { services } = compose()
    expect(instances().map(([name]) => name).sort()).toEqual(["animal-store-1", "animal-store-2"])
    expect(Object.keys(services).sort()).toEqual(["animal-store-1", "animal-store-2", "jaeger", "postgres", "prometheus", "redis"])
    expect(Fs.existsSync(Path.join(repoRoot, "Dockerfile"))).toBe(true)
    const exposed = /^EXPOSE (\d+)$/m.exec(read("Dockerfile"))?.[1]
    const hostPorts = instances().map(([, service]) => {
      const [host, container] = /^127\.0\.0\.1:(\d+):(\d+)$/.exec(service.ports![0]!)!.slice(1)
      expect(container).toBe(exposed)
      return host
    })
    expect(new Set(hostPorts).size).toBe(2)
    for (const [, service] of instances()) expect(service.depends_on?.["postgres"]?.condition).toBe("service_healthy")
  })

  it("each instance's settings decode with the service's configuration, and share the database, Redis and the collector", async () => {
    const known = new Set([...documented().keys(), ...examples().keys()])
    const decoded = await Promise.all(instances().map(async ([name, service]) => {
      const env: Record<string, string> = { ...service.environment!, API_KEYS: "compose-test-key" }
      for (const variable of Object.keys(env)) expect(known.has(variable) || isOtel(variable), `${name}: ${variable}`).toBe(true)
      return { env, ...(await decode(env)) }
    }))
    for (const { service, store } of decoded) {
      expect(store.store).toBe("postgres")
      expect(service.redisUrl !== undefined).toBe(true)
    }
    const [one, two] = decoded
    expect(one!.env["DATABASE_URL"]).toBe(two!.env["DATABASE_URL"])
    expect(one!.env["REDIS_URL"]).toBe(two!.env["REDIS_URL"])
    expect(one!.env["OTEL_SERVICE_NAME"]).not.toBe(two!.env["OTEL_SERVICE_NAME"])
    // The database URL names the credentials and database the postgres service creates.
    const url = new URL(Redacted.value(Option.getOrThrow(decoded[0]!.store.databaseUrl)))
    const postgres = compose().services["postgres"]!.environment!
    expect([url.hostname, url.username, url.password, url.pathname.slice(1)]).toEqual([
      "postgres",
      postgres["POSTGRES_USER"],
      postgres["POSTGRES_PASSWORD"],
      postgres["POSTGRES_DB"]
    ])
    // The collector takes OTLP over HTTP on 4318.
    expect(new URL(one!.env["OTEL_EXPORTER_OTLP_ENDPOINT"]!).host).toBe("jaeger:4318")
  })

  it("Prometheus scrapes both instances' /metrics, and promtool accepts its configuration", () => {
    const prometheus = Yaml.parse(read("deploy/prometheus.yml")).data as {
      readonly scrape_configs: ReadonlyArray<{ readonly metrics_path: string; readonly static_configs: ReadonlyArray<{ readonly targets: ReadonlyArray<string> }> }>
    }
    const [job] = prometheus.scrape_configs
    expect(job!.metrics_path).toBe("/metrics")
    expect(job!.static_configs.flatMap((config) => config.targets).sort()).toEqual(instances().map(([name]) => `${name}:8080`).sort())
    expect(compose().services["prometheus"]!.volumes).toContain("./deploy/prometheus.yml:/etc/prometheus/prometheus.yml:ro")
    const promtool = spawnSync("promtool", ["--version"], { encoding: "utf8" })
    if (promtool.error !== undefined) {
      // .ci/run installs it (Debian's prometheus package); a machine without it checks the rest.
      expect(process.env["CI"], "promtool is missing on CI").toBeUndefined()
      console.warn("compose.test: promtool is not installed; the Prometheus configuration's own check is skipped here")
      return
    }
    execFileSync("promtool", ["check", "config", Path.join(repoRoot, "deploy/prometheus.yml")], { encoding: "utf8" })
  })
})
