import { defineConfig } from "vitest/config"
import type { Reporter } from "vitest/node"

// Ends the run with the plain "N passed, N failed, N skipped" line that CI reads.
const summary: Reporter = {
  onTestRunEnd(testModules) {
    const counts = { passed: 0, failed: 0, skipped: 0 }
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state
        if (state === "passed") counts.passed++
        else if (state === "failed") counts.failed++
        else counts.skipped++
      }
    }
    console.log(`\n${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped`)
  }
}

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/e2e/ServiceBundleSetup.ts"],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    reporters: ["default", summary]
  }
})
