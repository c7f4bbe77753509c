/**
 * `./.env`, read when it exists, before anything reads the environment: imported first by
 * each program. Node's own loader; variables already set win. Not the `--env-file-if-exists`
 * flag, which writes ".env not found" to stderr on every start without one.
 */
import { existsSync } from "node:fs"

if (existsSync(".env")) process.loadEnvFile(".env")
