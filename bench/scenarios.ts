/**
 * What the side-by-side HTTP benchmark asks every server, shared by the orchestrator
 * (labels, expected statuses) and the load generator (the requests themselves), so
 * every server gets exactly the same request stream for a given seed.
 */
import { BODIES } from "./bodies.ts"

export interface PlannedRequest {
  readonly method: "GET" | "POST"
  readonly path: string
  readonly body?: string
}

export interface RequestSource {
  /** Seeded ids run from idMin to idMax, all present. */
  readonly idMin: number
  readonly idMax: number
  /** Uniform in [0, 1). */
  readonly random: () => number
  /** For the `path` scenario. */
  readonly path: string | undefined
}

export interface Scenario {
  readonly label: string
  /** Statuses that count as a correct answer. */
  readonly ok: ReadonlyArray<number>
  readonly next: (source: RequestSource) => PlannedRequest
}

const CREATE_BODY = BODIES.small()

const list: Scenario = { label: "GET /v1/pets?limit=20", ok: [200], next: () => ({ method: "GET", path: "/v1/pets?limit=20" }) }
const listSold: Scenario = {
  label: "GET /v1/pets?status=sold&limit=20",
  ok: [200],
  next: () => ({ method: "GET", path: "/v1/pets?status=sold&limit=20" })
}
const getById: Scenario = {
  label: "GET /v1/pets/{id}",
  ok: [200],
  next: (source) => ({
    method: "GET",
    path: `/v1/pets/${source.idMin + Math.floor(source.random() * (source.idMax - source.idMin + 1))}`
  })
}
const create: Scenario = { label: "POST /v1/pets", ok: [201], next: () => ({ method: "POST", path: "/v1/pets", body: CREATE_BODY }) }

export const SCENARIOS = {
  list,
  listSold,
  getById,
  create,
  mixed: {
    label: "mixed 80% read / 20% POST",
    ok: [200, 201],
    // Reads: 40% get by id, 20% list, 20% list filtered by status.
    next: (source) => {
      const r = source.random()
      if (r < 0.2) return create.next(source)
      if (r < 0.6) return getById.next(source)
      if (r < 0.8) return list.next(source)
      return listSold.next(source)
    }
  },
  path: {
    label: "GET <path>",
    ok: [200],
    next: (source) => ({ method: "GET", path: source.path ?? "/v1/pets" })
  }
} satisfies Record<string, Scenario>

export type ScenarioName = keyof typeof SCENARIOS

/** The measured scenarios, in the order they run and are reported. */
export const MEASURED: ReadonlyArray<ScenarioName> = ["list", "listSold", "getById", "create", "mixed"]
