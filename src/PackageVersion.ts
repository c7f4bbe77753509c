/** The package's version, written only in package.json: one directory up from src/ and from dist/ alike. */
import { readFileSync } from "node:fs"

export const version: string =
  (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { readonly version: string }).version
