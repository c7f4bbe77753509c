/**
 * The package's version, written only in package.json: the nearest one named
 * animal-store above this module, whether it runs from src/, dist/ or a bundle's chunk
 * (build/<hash>/, build/<hash>/tools/).
 */
import { readFileSync } from "node:fs"

const packageVersion = (): string => {
  for (let dir = new URL("./", import.meta.url);; dir = new URL("../", dir)) {
    try {
      const manifest = JSON.parse(readFileSync(new URL("package.json", dir), "utf8")) as { name?: string; version?: string }
      if (manifest.name === "animal-store" && typeof manifest.version === "string") return manifest.version
    } catch {
      // None here, or not readable: look further up.
    }
    if (new URL("../", dir).href === dir.href) throw new Error("animal-store: no package.json of animal-store above this module")
  }
}

export const version: string = packageVersion()
