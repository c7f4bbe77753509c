/**
 * The optional peer dependencies of animal-store (package.json's peerDependenciesMeta):
 * a library entry point or a program that needs one that is not installed fails with one
 * line naming the package to install, not with a resolution error from deep inside.
 * Plain Node, no Effect: main.ts uses it when a program cannot even be loaded.
 */
import { readFileSync } from "node:fs"

let peers: ReadonlyArray<string> | undefined

/**
 * The optional peers, as the package.json of animal-store above this module lists them
 * (from src/, dist/ or a bundle's chunk alike); read once, when first asked.
 */
export const optionalPeers = (): ReadonlyArray<string> => {
  if (peers !== undefined) return peers
  for (let dir = new URL("./", import.meta.url);; dir = new URL("../", dir)) {
    try {
      const manifest = JSON.parse(readFileSync(new URL("package.json", dir), "utf8")) as {
        readonly name?: string
        readonly peerDependenciesMeta?: Record<string, { readonly optional?: boolean }>
      }
      if (manifest.name === "animal-store") {
        return peers = Object.entries(manifest.peerDependenciesMeta ?? {}).flatMap(([name, meta]) => meta.optional === true ? [name] : [])
      }
    } catch {
      // None here, or not readable: look further up.
    }
    if (new URL("../", dir).href === dir.href) return peers = []
  }
}

/** The hint for `name`: what is missing and how to install it. */
export const hint = (name: string): string =>
  `the package ${name} is not installed (an optional peer dependency of animal-store); install it: npm install ${name}`

/** The error of `entry` (an entry point, a program) whose optional peer dependency `name` is not installed. */
export const missingPeer = (entry: string, name: string, cause?: unknown): Error =>
  new Error(`${entry}: ${hint(name)}`, { cause })

// "Cannot find package 'redis' imported from /…/NodeRedis.js": Node's words for a bare
// specifier it could not resolve (import, import.meta.resolve), on the main thread or a worker's.
const NOT_FOUND = /Cannot find package '((?:@[^/']+\/)?[^/']+)/

/**
 * The optional peer whose absence `error`, or one of its causes, reports: a module that
 * could not be loaded (ERR_MODULE_NOT_FOUND) because that package is not installed.
 */
export const missingPeerIn = (error: unknown): string | undefined => {
  for (let current = error, depth = 0; typeof current === "object" && current !== null && depth < 10; depth++) {
    const { code, message } = current as { readonly code?: unknown; readonly message?: unknown }
    const name = code === "ERR_MODULE_NOT_FOUND" && typeof message === "string" ? NOT_FOUND.exec(message)?.[1] : undefined
    if (name !== undefined && optionalPeers().includes(name)) return name
    current = (current as { readonly cause?: unknown }).cause
  }
  return undefined
}
