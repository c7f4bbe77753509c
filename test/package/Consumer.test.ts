import { describe, expect, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..")
const fixture = join(repo, "test", "package", "consumer")
const node = process.execPath
const own = JSON.parse(readFileSync(join(repo, "package.json"), "utf8")) as {
  readonly devDependencies: Record<string, string>
  readonly dependencies: Record<string, string>
}

const run = (command: string, args: ReadonlyArray<string>, cwd: string): string => {
  try {
    return execFileSync(command, args, {
      cwd,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
      // npm itself may run on an older system Node; the scripts it runs must use ours.
      env: { ...process.env, PATH: `${dirname(node)}:${process.env["PATH"] ?? ""}` }
    })
  } catch (error) {
    const { stdout, stderr } = error as { readonly stdout?: string; readonly stderr?: string }
    throw new Error(`${command} ${args.join(" ")} failed:\n${stdout ?? ""}\n${stderr ?? ""}`)
  }
}

const embeddingExamples = (): Array<string> => {
  const guide = readFileSync(join(repo, "docs", "embedding.md"), "utf8")
  return [...guide.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!)
}

describe("the packed package in a consumer project outside the repo", () => {
  it("installs from the tarball, typechecks, and runs the three embedding uses", () => {
    const project = mkdtempSync(join(tmpdir(), "animal-store-consumer-"))
    try {
      const tarball = run("npm", ["pack", "--silent", "--pack-destination", project], repo).trim().split("\n").pop()!
      writeFileSync(join(project, "package.json"), JSON.stringify({
        name: "animal-store-consumer",
        private: true,
        type: "module",
        dependencies: {
          "animal-store": `file:./${tarball}`,
          "effect": own.devDependencies["effect"],
          "@effect/sql-pg": own.devDependencies["@effect/sql-pg"],
          "@effect/platform-node": own.dependencies["@effect/platform-node"]
        },
        devDependencies: {
          "typescript": own.devDependencies["typescript"],
          "@types/node": own.devDependencies["@types/node"]
        }
      }, null, 2))
      copyFileSync(join(fixture, "consumer.ts"), join(project, "consumer.ts"))
      copyFileSync(join(fixture, "tsconfig.json"), join(project, "tsconfig.json"))
      // The embedding guide's examples are typechecked beside it, so they cannot rot.
      const examples = embeddingExamples()
      expect(examples.length).toBeGreaterThanOrEqual(3)
      examples.forEach((code, i) => writeFileSync(join(project, `embedding-example-${i + 1}.ts`), code))

      run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", "--ignore-scripts"], project)
      // Consumers import only the public entry points: no deep path resolves.
      expect(() => run(node, ["--input-type=module", "-e", "await import('animal-store/dist/domain/index.js')"], project))
        .toThrow()
      run(node, [join(project, "node_modules", "typescript", "bin", "tsc"), "-p", project], project)
      const output = run(node, [join(project, "consumer.ts")], project)
      expect(output).toContain("1 domain + memory adapter: ok")
      expect(output).toContain("2 API mounted beside the host's routes: ok")
      expect(output).toContain("3 typed client, with a typed 404: ok")
    } finally {
      rmSync(project, { recursive: true, force: true })
    }
  }, 300_000)
})
