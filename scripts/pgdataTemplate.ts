/**
 * Makes the pre-initialised data directory for the installed PGlite (see
 * src/adapters/embedded/PgdataTemplate.ts): `node scripts/pgdataTemplate.ts [directory]`,
 * by default next to that module. Kept out of the module itself, which the database
 * thread's bundle inlines into its entry, where `import.meta.main` is true.
 */
import * as Path from "node:path"
import * as PgdataTemplate from "../src/adapters/embedded/PgdataTemplate.ts"

console.log(`Wrote ${await PgdataTemplate.make(process.argv[2] ?? Path.dirname(PgdataTemplate.file))}`)
