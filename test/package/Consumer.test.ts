import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { execFileSync, spawn, spawnSync } from "node:child_process"
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync
} from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import * as PgdataTemplate from "../../src/adapters/embedded/PgdataTemplate.ts"
import { freePort } from "../e2e/ServiceProcess.ts"

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..")
const fixture = join(repo, "test", "package", "consumer")
const node = process.execPath
const own = JSON.parse(readFileSync(join(repo, "package.json"), "utf8")) as {
  readonly engines: { readonly node: string }
  readonly version: string
  readonly peerDependencies: Record<string, string>
  readonly devDependencies: Record<string, string>
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

/**
 * The installed package's one bin, `animal-store ...args`, in `project` with only `env`
 * (and a PATH whose `node` is ours): its exit code and output, whatever the code.
 */
const bin = (project: string, args: ReadonlyArray<string>, env: Record<string, string> = {}) => {
  const result = spawnSync(join(project, "node_modules", ".bin", "animal-store"), args, {
    cwd: project,
    encoding: "utf8",
    timeout: 60_000,
    env: { PATH: `${dirname(node)}:${process.env["PATH"] ?? ""}`, HOME: process.env["HOME"] ?? "", ...env }
  })
  return { code: result.status, stdout: result.stdout, stderr: result.stderr }
}

/** `animal-store serve` in `project` until it logs "ready"; its GET of `path` with `key`, then its exit after SIGTERM. */
const serveOnce = (project: string, env: Record<string, string>, path: string, key: string) =>
  new Promise<{ readonly status: number; readonly code: number | null; readonly output: string }>((resolve, reject) => {
    const child = spawn(join(project, "node_modules", ".bin", "animal-store"), ["serve"], {
      cwd: project,
      env: { PATH: `${dirname(node)}:${process.env["PATH"] ?? ""}`, HOME: process.env["HOME"] ?? "", ...env }
    })
    let output = ""
    let status = 0
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000)
    child.stderr.on("data", (chunk) => output += chunk)
    child.stdout.on("data", (chunk) => {
      output += chunk
      if (status === 0 && output.includes('"msg":"ready"')) {
        status = -1
        fetch(`http://127.0.0.1:${env["PORT"]}${path}`, { headers: { authorization: `Bearer ${key}` } }).then(
          (answer) => {
            status = answer.status
            child.kill("SIGTERM")
          },
          reject
        )
      }
    })
    child.once("close", (code) => {
      clearTimeout(timer)
      resolve({ status, code, output })
    })
  })

interface Packed {
  readonly tarball: string
  readonly files: ReadonlyArray<string>
}

/** The package in `dir` (the library by default) packed into `project`: its tarball's name and what it holds. */
const packInto = (project: string, dir = repo): Packed => {
  const [packed] = JSON.parse(run("npm", ["pack", "--json", "--pack-destination", project], dir)) as [{
    readonly filename: string
    readonly files: ReadonlyArray<{ readonly path: string }>
  }]
  return { tarball: packed.filename, files: packed.files.map((file) => file.path) }
}

/**
 * What an installed package's source maps would fail to find: a `sourceMappingURL` naming a
 * file the tarball lacks, and a map's source that is neither shipped nor in `sourcesContent`.
 */
const orphanMaps = (installed: string, files: ReadonlyArray<string>): Array<string> => {
  const shipped = new Set(files)
  return files.flatMap((file) => {
    const text = readFileSync(join(installed, file), "utf8")
    if (file.endsWith(".map")) {
      const map = JSON.parse(text) as { readonly sources: ReadonlyArray<string>; readonly sourcesContent?: ReadonlyArray<unknown> }
      return map.sources.flatMap((source, i) =>
        shipped.has(join(dirname(file), source)) || typeof map.sourcesContent?.[i] === "string" ? [] : [`${file}: ${source}`]
      )
    }
    const url = /^\/\/# sourceMappingURL=(\S+)$/m.exec(text)?.[1]
    return url === undefined || shipped.has(join(dirname(file), url)) ? [] : [`${file}: ${url}`]
  })
}

/** What npm says when the registry cannot be reached. */
const UNREACHABLE = /\b(?:ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH)\b/

/**
 * Node `version` from the `node` npm package (whose install script fetches the binary),
 * installed into `dir` alone: the binary, or npm's line saying the registry is unreachable.
 */
const installNode = (dir: string, version: string): { readonly binary: string } | { readonly unreachable: string } => {
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, "package.json"), JSON.stringify({ private: true, allowScripts: { node: true } }))
  try {
    run("npm", ["install", "--no-save", "--no-audit", "--no-fund", "--prefer-offline", `node@${version}`], dir)
  } catch (error) {
    const text = error instanceof Error ? error.message : String(error)
    if (!UNREACHABLE.test(text)) throw error
    return { unreachable: text.split("\n").find((line) => UNREACHABLE.test(line))!.trim() }
  }
  return { binary: join(dir, "node_modules", ".bin", "node") }
}

/** The system identifier that initdb chose for the data directory the template at `file` holds. */
const templateIdentifier = (file: string): string => {
  const dir = mkdtempSync(join(tmpdir(), "animal-store-template-"))
  try {
    PgdataTemplate.restore(readFileSync(file), dir)
    return readFileSync(join(dir, "global", "pg_control")).readBigUInt64LE(0).toString()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const embeddingExamples = (): Array<string> => {
  const guide = readFileSync(join(repo, "docs", "embedding.md"), "utf8")
  return [...guide.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!)
}

describe("the packed package in a consumer project outside the repo", () => {
  // The library is packed once (its prepack builds dist/ with tsc) for both consumers; each
  // installs its own copy of the one tarball.
  let packs = ""
  let packed: Packed = { tarball: "", files: [] }
  beforeAll(() => {
    packs = mkdtempSync(join(tmpdir(), "animal-store-packs-"))
    packed = packInto(packs)
  }, 300_000)
  afterAll(() => {
    if (packs !== "") rmSync(packs, { recursive: true, force: true })
  })
  /** The library's tarball copied into `project`: what packInto(project) would have made. */
  const libraryInto = (project: string): Packed => {
    copyFileSync(join(packs, packed.tarball), join(project, packed.tarball))
    return packed
  }

  it("installs from the tarball, typechecks with declarations (every client method too), runs the three embedding uses, and its bin", async () => {
    const project = mkdtempSync(join(tmpdir(), "animal-store-consumer-"))
    try {
      const library = libraryInto(project)
      const pgdata = packInto(project, join(repo, "packages", "pgdata"))
      const templateFile = `pgdata-pglite-${own.devDependencies["@electric-sql/pglite"]}.tar.br`
      // The library ships no data template (a memory-only host never uses it) and no source
      // maps (they would point at src/, which it does not ship); the template is
      // animal-store-pgdata's, released with the library's version.
      expect(library.files.filter((file) => file.includes("pgdata") || file.endsWith(".map"))).toEqual([])
      expect([...pgdata.files].sort()).toEqual(["LICENSE", "README.md", "package.json", templateFile])
      expect(pgdata.tarball).toBe(`animal-store-pgdata-${own.version}.tgz`)
      expect(own.peerDependencies["animal-store-pgdata"]).toBe(`^${own.version}`)
      writeFileSync(join(project, "package.json"), JSON.stringify({
        name: "animal-store-consumer",
        private: true,
        type: "module",
        dependencies: {
          "animal-store": `file:./${library.tarball}`,
          "animal-store-pgdata": `file:./${pgdata.tarball}`,
          "effect": own.devDependencies["effect"],
          "@effect/sql-pg": own.devDependencies["@effect/sql-pg"],
          "@electric-sql/pglite": own.devDependencies["@electric-sql/pglite"],
          "@effect/platform-node": own.devDependencies["@effect/platform-node"],
          // The service processes photos with it from its start.
          "sharp": own.devDependencies["sharp"]
        },
        devDependencies: {
          "typescript": own.devDependencies["typescript"],
          "@types/node": own.devDependencies["@types/node"]
        }
      }, null, 2))
      // consumer.ts, clientMethods.ts (every client method, for the declarations) and the tsconfig.
      for (const file of readdirSync(fixture)) copyFileSync(join(fixture, file), join(project, file))
      // The embedding guide's examples are typechecked beside it, so they cannot rot.
      const examples = embeddingExamples()
      expect(examples.length).toBeGreaterThanOrEqual(3)
      examples.forEach((code, i) => writeFileSync(join(project, `embedding-example-${i + 1}.ts`), code))

      run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", "--ignore-scripts"], project)
      expect(orphanMaps(join(project, "node_modules", "animal-store"), library.files)).toEqual([])
      // Consumers import only the public entry points: no deep path resolves.
      expect(() => run(node, ["--input-type=module", "-e", "await import('animal-store/dist/domain/index.js')"], project))
        .toThrow()
      run(node, [join(project, "node_modules", "typescript", "bin", "tsc"), "-p", project], project)
      const output = run(node, [join(project, "consumer.ts")], project)
      expect(output).toContain("1 domain + memory adapter: ok")
      expect(output).toContain("2 API mounted beside the host's routes: ok")
      expect(output).toContain("3 typed client, with a typed 404: ok")
      // Its empty directory was filled from animal-store-pgdata's template, not by initdb.
      const identifier = templateIdentifier(join(project, "node_modules", "animal-store-pgdata", templateFile))
      expect(output).toContain(`4 embedded store on an empty directory: ok, system identifier ${identifier}`)

      // The library runs on Node 22 too: the same consumer, and the bin's --version, on the
      // oldest Node its engines admit (the service itself stays on Node 24).
      const floor = own.engines.node.replace(/^>=/, "")
      expect(floor).toMatch(/^22\./)
      const node22 = installNode(join(project, "node22"), floor)
      if ("unreachable" in node22) {
        if ((process.env["CI"] ?? "") !== "") throw new Error(`Node ${floor} could not be installed: ${node22.unreachable}`)
        console.warn(`SKIPPED: the consumer on Node ${floor}: the npm registry cannot be reached (${node22.unreachable})`)
      } else {
        expect(run(node22.binary, ["--version"], project).trim()).toBe(`v${floor}`)
        const on22 = run(node22.binary, [join(project, "consumer.ts")], project)
        for (let step = 1; step <= 4; step++) expect(on22).toMatch(new RegExp(`^${step} .*: ok`, "m"))
        expect(on22).toContain(`system identifier ${identifier}`)
        const version = run(node22.binary, [join(project, "node_modules", "animal-store", "dist", "main.js"), "--version"], project)
        expect(version.trim()).toBe(`animal-store v${own.version}`)
      }

      // The one bin, animal-store: its subcommands, each with its help.
      const help = bin(project, ["--help"])
      expect(help.code, help.stderr).toBe(0)
      for (const name of ["serve", "migrate", "keys", "webhooks"]) {
        expect(help.stdout).toMatch(new RegExp(`^\\s+${name}\\s{2,}\\S`, "m"))
        const subcommand = bin(project, [name, "--help"])
        expect(subcommand.code, subcommand.stderr).toBe(0)
        expect(subcommand.stdout).toContain(`animal-store ${name}`)
      }
      expect(bin(project, ["--version"]).stdout.trim()).toBe(`animal-store v${own.version}`)
      // Each program on a new data directory, then the service with the key the command made.
      const store = { STORE: "embedded", DATA_DIR: join(project, "data") }
      const migrated = bin(project, ["migrate", "apply"], store)
      expect(migrated.code, migrated.stderr).toBe(0)
      expect(migrated.stdout).toMatch(/^Applied 0001_create_pets$/m)
      const created = bin(project, ["keys", "create", "--name", "consumer"], store)
      expect(created.code, created.stderr).toBe(0)
      const key = created.stdout.trim()
      expect(key).toMatch(/^as_[0-9a-f]{12}_/)
      expect(bin(project, ["webhooks", "list"], store).stdout.trim()).toBe("ID  URL  TYPES  CREATED  STATE")
      const served = await serveOnce(project, { ...store, PORT: String(await freePort()), MIGRATE: "off" }, "/v1/pets", key)
      expect(served.status, served.output).toBe(200)
      expect(served.code, served.output).toBe(0)
      // Photos in an S3 bucket need the AWS SDK, which the consumer did not install: named at start.
      const s3 = bin(project, ["serve"], { ...store, PORT: String(await freePort()), PHOTO_STORE: "s3", S3_BUCKET: "photos" })
      expect(s3.code, s3.stderr).toBe(1)
      expect(s3.stderr).toBe(
        "Animal Store stopped: the package @aws-sdk/client-s3 is not installed (an optional peer dependency of animal-store); " +
          "install it: npm install @aws-sdk/client-s3\n"
      )
      // A missing optional peer: the one line of the library's hint, for the program that needs it.
      renameSync(join(project, "node_modules", "@effect", "sql-pg"), join(project, "sql-pg-aside"))
      const missing = bin(project, ["keys", "list"], store)
      expect(missing.code).toBe(1)
      expect(missing.stderr).toBe(
        "animal-store keys: the package @effect/sql-pg is not installed (an optional peer dependency of animal-store); " +
          "install it: npm install @effect/sql-pg\n"
      )
    } finally {
      rmSync(project, { recursive: true, force: true })
    }
  }, 300_000)

  it("installs light for the domain and the memory store: no store driver, and the embedded entry names what it needs", () => {
    const project = mkdtempSync(join(tmpdir(), "animal-store-light-"))
    try {
      const { tarball } = libraryInto(project)
      writeFileSync(join(project, "package.json"), JSON.stringify({
        name: "animal-store-light-consumer",
        private: true,
        type: "module",
        dependencies: { "animal-store": `file:./${tarball}`, "effect": own.devDependencies["effect"] }
      }, null, 2))
      writeFileSync(join(project, "light.js"), [
        `import { CategoryId, NewPet, PetName } from "animal-store/domain"`,
        `import { PetRepositoryMemory } from "animal-store/memory"`,
        `import { PetRepository } from "animal-store/ports"`,
        `import { Effect } from "effect"`,
        `const pet = await Effect.runPromise(Effect.gen(function*() {`,
        `  const pets = yield* PetRepository`,
        `  const rex = yield* pets.create(new NewPet({ name: PetName.make("Rex"), categoryId: CategoryId.make(7n), status: "available" }))`,
        `  return yield* pets.get(rex.id)`,
        `}).pipe(Effect.provide(PetRepositoryMemory.layer)))`,
        `console.log("light consumer: " + pet.name)`
      ].join("\n"))
      run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", "--ignore-scripts"], project)
      for (
        const driver of [
          "@electric-sql/pglite",
          "redis",
          "@effect/sql-pg",
          "pg",
          "@effect/platform-node",
          "@aws-sdk/client-s3",
          "@aws-sdk/s3-request-presigner"
        ]
      ) {
        expect(existsSync(join(project, "node_modules", driver)), driver).toBe(false)
      }
      expect(run(node, [join(project, "light.js")], project)).toContain("light consumer: Rex")
      expect(() => run(node, ["--input-type=module", "-e", "await import('animal-store/embedded')"], project)).toThrow(
        "animal-store/postgres, animal-store/embedded: the package @effect/sql-pg is not installed (an optional peer dependency of animal-store); install it: npm install @effect/sql-pg"
      )
      expect(() => run(node, ["--input-type=module", "-e", "await import('animal-store/postgres')"], project)).toThrow(
        "npm install @effect/sql-pg"
      )
      // The bin needs @effect/platform-node for anything, --help included, and says so in one line.
      const help = bin(project, ["--help"])
      expect(help.code).toBe(1)
      expect(help.stdout).toBe("")
      expect(help.stderr).toBe(
        "animal-store: the package @effect/platform-node is not installed (an optional peer dependency of animal-store); " +
          "install it: npm install @effect/platform-node\n"
      )
    } finally {
      rmSync(project, { recursive: true, force: true })
    }
  }, 300_000)
})
