/**
 * The webhook receiver of docs/webhooks.md, run as written: its ```ts block is typechecked strictly
 * and run by Node on a delivery signed and written as the dispatcher signs and writes one,
 * whose int64 fields are past 2^53. The event must come out with every digit, and a
 * forged body must be refused.
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { DateTime } from "effect"
import { describe, expect, it } from "vitest"
import { issueSecret } from "../../src/application/webhooks/SecretIssuer.ts"
import { payload } from "../../src/application/webhooks/WebhookDispatcher.ts"
import { signatureHeaders } from "../../src/application/webhooks/WebhookSignature.ts"
import { petData } from "../../src/domain/events/EventData.ts"
import { EventId } from "../../src/domain/events/EventId.ts"
import { StoreEvent } from "../../src/domain/events/StoreEvent.ts"
import { CategoryId } from "../../src/domain/pets/CategoryId.ts"
import { Pet } from "../../src/domain/pets/Pet.ts"
import { PetId } from "../../src/domain/pets/PetId.ts"
import { PetName } from "../../src/domain/pets/PetName.ts"
import { FIRST_VERSION } from "../../src/domain/pets/PetVersion.ts"

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..")

/** The README's ```ts block that uses `standardwebhooks`, out of its list item's indent. */
const receiverSnippet = (): string => {
  const readme = readFileSync(join(repo, "docs", "webhooks.md"), "utf8")
  const block = [...readme.matchAll(/^( *)```ts\n([\s\S]*?)^\1```/gm)]
    .map(([, indent, code]) => code!.split("\n").map((line) => line.slice(indent!.length)).join("\n"))
    .find((code) => code.includes(`from "standardwebhooks"`))
  if (block === undefined) throw new Error("docs/webhooks.md has no ts block importing standardwebhooks")
  return block
}

const run = (args: ReadonlyArray<string>, cwd: string, env: NodeJS.ProcessEnv = process.env): string => {
  try {
    return execFileSync(process.execPath, args, { cwd, env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })
  } catch (error) {
    const { stdout, stderr } = error as { readonly stdout?: string; readonly stderr?: string }
    throw new Error(`node ${args.join(" ")} failed:\n${stdout ?? ""}\n${stderr ?? ""}`)
  }
}

describe("the README's webhook receiver", () => {
  it("typechecks, verifies a real delivery, keeps its int64 fields exact, and refuses a forged one", () => {
    const dir = mkdtempSync(join(tmpdir(), "animal-store-receiver-"))
    try {
      symlinkSync(join(repo, "node_modules"), join(dir, "node_modules"))
      writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module" }))
      writeFileSync(join(dir, "receiver.ts"), receiverSnippet())
      writeFileSync(join(dir, "check.ts"), [
        `import { verifiedEvent } from "./receiver.ts"`,
        `const { body, headers } = JSON.parse(process.argv[2]!) as { body: string; headers: Record<string, string> }`,
        `const exact = (value: unknown) => JSON.stringify(value, (_key, v: unknown) => typeof v === "bigint" ? \`\${v}n\` : v)`,
        `console.log(exact(verifiedEvent(body, headers)))`,
        `try {`,
        `  verifiedEvent(body.replace("Rex", "Tom"), headers)`,
        `  console.log("forged: accepted")`,
        `} catch {`,
        `  console.log("forged: refused")`,
        `}`
      ].join("\n"))
      run([
        join(repo, "node_modules", "typescript", "bin", "tsc"),
        "--noEmit",
        "--strict",
        "--target", "es2022",
        "--module", "nodenext",
        "--allowImportingTsExtensions",
        "--skipLibCheck",
        "--types", "node",
        "receiver.ts",
        "check.ts"
      ], dir)

      const pet = new Pet({
        id: PetId.make(9007199254740993n),
        name: PetName.make("Rex"),
        categoryId: CategoryId.make(-(2n ** 63n)),
        status: "available",
        version: FIRST_VERSION
      })
      const event = new StoreEvent({
        id: EventId.make(2n ** 63n - 1n),
        type: "pet.created",
        occurredAt: DateTime.makeUnsafe(Date.UTC(2026, 0, 2)),
        data: petData(pet)
      })
      const body = payload(event)
      const secret = issueSecret()
      const headers = signatureHeaders({ id: `evt_${event.id}`, timestamp: Math.floor(Date.now() / 1000), body }, [secret])
      const [received, forged] = run(["check.ts", JSON.stringify({ body, headers })], dir, {
        ...process.env,
        WEBHOOK_SECRET: secret
      }).trim().split("\n")
      expect(JSON.parse(received!)).toMatchObject({
        type: "pet.created",
        timestamp: "2026-01-02T00:00:00.000Z",
        data: { id: "9007199254740993n", name: "Rex", categoryId: "-9223372036854775808n", status: "available" }
      })
      expect(forged).toBe("forged: refused")
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)
})
