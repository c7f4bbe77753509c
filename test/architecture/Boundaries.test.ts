/**
 * The house rules of .dependency-cruiser.cjs, checked on the real tree (no violation,
 * no cycle) and on a planted tree where each rule must fire, so that a rule that
 * silently matches nothing is caught too.
 */
import { execFile } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { promisify } from "node:util"
import { afterAll, describe, expect, it } from "vitest"
import { repoRoot } from "../e2e/ServiceProcess.ts"

const run = promisify(execFile)
const depcruise = Path.join(repoRoot, "node_modules/.bin/depcruise")
const config = Path.join(repoRoot, ".dependency-cruiser.cjs")

interface Violation {
  readonly rule: { readonly name: string }
  readonly from: string
  readonly to: string
}

/** The violations depcruise reports for `src` under `cwd`. */
const violationsIn = async (cwd: string): Promise<ReadonlyArray<Violation>> => {
  const { stdout } = await run(depcruise, ["src", "--config", config, "--output-type", "json"], {
    cwd,
    maxBuffer: 64 * 1024 * 1024
  }).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? "" }))
  return (JSON.parse(stdout) as { summary: { violations: ReadonlyArray<Violation> } }).summary.violations
}

const planted = Fs.mkdtempSync(Path.join(Os.tmpdir(), "animal-store-boundaries-"))
afterAll(() => Fs.rmSync(planted, { recursive: true, force: true }))

const plant = (files: Record<string, string>) => {
  for (const [file, text] of Object.entries(files)) {
    Fs.mkdirSync(Path.dirname(Path.join(planted, file)), { recursive: true })
    Fs.writeFileSync(Path.join(planted, file), text)
  }
}

describe("dependency boundaries", () => {
  it("the source tree has no violation and no cycle", { timeout: 120_000 }, async () => {
    expect(await violationsIn(repoRoot)).toEqual([])
  })

  it("each rule fires on a planted violation", { timeout: 120_000 }, async () => {
    plant({
      "tsconfig.json": JSON.stringify({
        compilerOptions: { module: "NodeNext", moduleResolution: "NodeNext", allowImportingTsExtensions: true, noEmit: true }
      }),
      "src/main.ts": `import "./adapters/store/Store.ts"\n`,
      "src/domain/Pet.ts": `import "node:fs"\nimport "../ports/Repo.ts"\n`,
      "src/ports/Repo.ts": `import "../adapters/store/Store.ts"\n`,
      "src/adapters/store/Store.ts": `import "../../main.ts"\nimport "../other/Internal.ts"\n`,
      "src/adapters/other/Internal.ts": `import "./Cycle.ts"\n`,
      "src/adapters/other/Cycle.ts": `import "./Internal.ts"\n`,
      "src/adapters/other/Wired.ts": `import "../../programs/StoreWiring.ts"\n`,
      "src/programs/StoreWiring.ts": `export {}\n`,
      "src/application/UseCase.ts": `import "../adapters/store/Store.ts"\n`
    })
    const violations = await violationsIn(planted)
    // The composition root is main.ts and the programs' folder: neither may be imported from inside.
    expect(
      violations.filter((violation) => violation.rule.name === "no-composition-root-from-inside")
        .map((violation) => violation.to).sort()
    ).toEqual(["src/main.ts", "src/programs/StoreWiring.ts"])
    const fired = new Set(violations.map((violation) => violation.rule.name))
    expect([...fired].sort()).toEqual([
      "application-imports-only-inward",
      "domain-imports-only-effect",
      "no-adapter-internals-across-adapters",
      "no-composition-root-from-inside",
      "no-cycles",
      "ports-import-only-domain"
    ])
  })
})
