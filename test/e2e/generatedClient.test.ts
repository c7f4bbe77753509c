/**
 * The documented client recipe, run as written: its three files (generate-types.ts,
 * client.ts, example.ts) are taken from docs/generated-client.md, the types are generated with
 * openapi-typescript from the live service's document, everything is typechecked
 * strictly (int64 fields must be `bigint`), the parser's int64 keys are the document's,
 * and the example round-trips 9007199254740993 through the real server.
 */
import { execFile } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { killAll, nodeBin, repoRoot, type ServiceProcess, startService } from "./ServiceProcess.ts"

const run = promisify(execFile)
const API_KEY = "client-key"
const FILES = ["generate-types.ts", "client.ts", "example.ts"] as const

const RECIPE = "docs/generated-client.md"

/** The recipe's ```ts block whose first line is `// <name>…`. */
const recipeBlock = (recipe: string, name: string): string => {
  const block = [...recipe.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!)
    .find((code) => code.startsWith(`// ${name}`))
  if (block === undefined) throw new Error(`${RECIPE} has no ts block starting with // ${name}`)
  return block
}

let service: ServiceProcess
let dir: string

beforeAll(async () => {
  service = await startService({ env: { STORE: "memory", API_KEYS: API_KEY } })
  dir = mkdtempSync(join(tmpdir(), "animal-store-client-"))
  // The project's own packages (openapi-typescript, openapi-fetch, typescript), as the recipe installs them.
  symlinkSync(join(repoRoot, "node_modules"), join(dir, "node_modules"))
  writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module" }))
  const recipe = readFileSync(join(repoRoot, RECIPE), "utf8")
  for (const file of FILES) writeFileSync(join(dir, file), recipeBlock(recipe, file))
}, 60_000)

afterAll(async () => {
  await killAll()
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
})

describe("the documented generated client", () => {
  it("generates bigint types for int64, typechecks strictly, and keeps 9007199254740993 exact through the server", async () => {
    const env = { ...process.env, OPENAPI_URL: `${service.baseUrl}/v1/openapi.json`, BASE_URL: `${service.baseUrl}/v1`, API_KEY }
    await run(nodeBin, ["generate-types.ts"], { cwd: dir, env })
    const types = readFileSync(join(dir, "animal-store.ts"), "utf8")
    expect(types).toMatch(/categoryId: bigint;/)
    expect(types).toMatch(/petId: bigint;/)
    expect(types).toMatch(/eventId: bigint;/)

    // The parser's int64 keys are the document's, eventId among them; other numbers stay numbers.
    writeFileSync(join(dir, "int64-check.ts"), [
      `import { int64Keys } from "./animal-store.ts"`,
      `import { parseJson } from "./client.ts"`,
      `const delivery = parseJson('{"id":9007199254740993,"eventId":9223372036854775807,"attempt":2,"status":404}')`,
      `console.log(JSON.stringify({ keys: [...int64Keys], delivery }, (_key, value: unknown) =>`,
      `  typeof value === "bigint" ? \`\${value}n\` : value))`
    ].join("\n"))
    const { stdout: checked } = await run(nodeBin, ["int64-check.ts"], { cwd: dir, env })
    expect(JSON.parse(checked)).toEqual({
      keys: ["categoryId", "eventId", "id", "petId"],
      delivery: { id: "9007199254740993n", eventId: "9223372036854775807n", attempt: 2, status: 404 }
    })

    // A number where the types say bigint must not compile: the types really are bigint.
    writeFileSync(join(dir, "types-check.ts"), [
      `import type { components } from "./animal-store.ts"`,
      `export const exact: components["schemas"]["Pet"]["categoryId"] = 9007199254740993n`,
      `// @ts-expect-error a number is not an int64 field`,
      `export const rounded: components["schemas"]["Pet"]["id"] = 1`
    ].join("\n"))
    const tsc = join(repoRoot, "node_modules/typescript/bin/tsc")
    await run(nodeBin, [
      tsc,
      "--noEmit",
      "--strict",
      "--target", "es2022",
      "--module", "nodenext",
      "--allowImportingTsExtensions",
      "--skipLibCheck",
      "--types", "node",
      ...FILES,
      "types-check.ts",
      "int64-check.ts"
    ], { cwd: dir, env }).catch((error: { stdout?: string }) => {
      throw new Error(`the recipe does not typecheck:\n${error.stdout ?? String(error)}`)
    })

    const { stdout } = await run(nodeBin, ["example.ts"], { cwd: dir, env })
    expect(stdout.trim()).toBe("9007199254740993n 9007199254740993n not_found")
    // And the server stored exactly that.
    const listed = await service.request("GET", "/v1/pets", { apiKey: API_KEY })
    expect(listed.text).toContain(`"categoryId":9007199254740993`)
  }, 90_000)
})
