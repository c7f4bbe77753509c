/**
 * The house rules, checked in `npm test` (test/architecture/Boundaries.test.ts):
 * dependencies point inward only, domain ← ports ← adapters ← composition roots.
 * @type {import("dependency-cruiser").IConfiguration}
 */
module.exports = {
  forbidden: [
    {
      name: "domain-imports-only-effect",
      comment: "The domain is pure: it imports other domain modules and effect, nothing else (no node:, no ports, no adapters).",
      severity: "error",
      from: { path: "^src/domain/" },
      to: { pathNot: ["^src/domain/", "(^|/)node_modules/effect/"] }
    },
    {
      name: "application-imports-only-inward",
      comment: "Use cases (application/) work on ports and the domain; they know no adapter.",
      severity: "error",
      from: { path: "^src/application/" },
      to: { path: "^src/adapters/" }
    },
    {
      name: "ports-import-only-domain",
      comment: "A port names what the domain needs; it knows nothing of adapters.",
      severity: "error",
      from: { path: "^src/ports/" },
      to: { pathNot: ["^src/domain/", "^src/ports/", "(^|/)node_modules/effect/"] }
    },
    {
      name: "no-composition-root-from-inside",
      comment:
        "Only the composition root (src/main.ts and the programs, their wiring and configuration in src/programs/) " +
        "picks adapters; nothing inside imports it.",
      severity: "error",
      from: { path: "^src/(domain|ports|adapters|application)/" },
      to: { path: ["^src/[^/]+\\.ts$", "^src/programs/"] }
    },
    {
      name: "no-adapter-internals-across-adapters",
      comment:
        "An adapter uses another adapter only through its index.ts. Shared support that every adapter may use: " +
        "idempotency (request identity, in-flight keys), process (release deadlines, live pids), observability (metrics, logs, spans).",
      severity: "error",
      from: { path: "^src/adapters/([^/]+)/" },
      to: {
        path: "^src/adapters/([^/]+)/",
        pathNot: [
          "^src/adapters/$1/",
          "^src/adapters/(idempotency|process|observability)/",
          "^src/adapters/[^/]+/index\\.ts$"
        ]
      }
    },
    {
      name: "no-cycles",
      severity: "error",
      from: {},
      to: { circular: true }
    }
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "require", "node", "default", "types"] }
  }
}
