/**
 * The clean-up every process test file needs, registered once: no service process outlives
 * its test, and the file's temporary directories and PostgreSQL databases go when it ends.
 */
import { afterAll, afterEach } from "vitest"
import { dropAllDatabases, postgresAvailable } from "./PgAdmin.ts"
import { killAll, removeTempDirs } from "./ServiceProcess.ts"

export const cleanUpProcesses = (): void => {
  afterEach(killAll)
  afterAll(async () => {
    await killAll()
    removeTempDirs()
    if (postgresAvailable) await dropAllDatabases()
  })
}
