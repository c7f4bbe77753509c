import { availableParallelism } from "node:os"
import { defineConfig } from "vitest/config"
import { BaseSequencer, type Reporter, type TestSpecification } from "vitest/node"

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

/**
 * The longest files, longest first (about 20-90 s each alone on 2 CPUs). They start first so
 * that none of them is left running alone at the end: without a cache of earlier runs (a
 * clean clone, as on CI) vitest starts the largest files first, and these are small.
 */
const longest = [
  "test/application/webhooks/WebhookDispatcherEmbedded.test.ts",
  "test/package/Consumer.test.ts",
  "test/e2e/frozenDependencies.test.ts",
  "test/application/webhooks/WebhookDispatcherPostgres.test.ts",
  "test/e2e/webhookDelivery.test.ts",
  "test/application/webhooks/WebhookDispatcherMemory.test.ts",
  "test/e2e/browser.test.ts",
  "test/e2e/embedded.test.ts",
  "test/adapters/embedded/TagSearchPlanEmbedded.test.ts",
  "test/e2e/webhooks.test.ts",
  "test/e2e/events.test.ts",
  "test/adapters/embedded/PetRepositoryEmbedded.test.ts"
]

class LongestFirst extends BaseSequencer {
  override async sort(files: Array<TestSpecification>): Promise<Array<TestSpecification>> {
    const sorted = await super.sort(files)
    const rank = (spec: TestSpecification) => {
      const index = longest.findIndex((path) => spec.moduleId.endsWith(`/${path}`))
      return index === -1 ? longest.length : index
    }
    // Stable: the rest keep vitest's own order (failed, then longer by its cache, then larger).
    return sorted.map((spec, index) => ({ spec, index }))
      .sort((a, b) => rank(a.spec) - rank(b.spec) || a.index - b.index)
      .map(({ spec }) => spec)
  }
}

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/e2e/ServiceBundleSetup.ts"],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    reporters: ["default", summary],
    // vitest's default is one worker fewer than the CPUs: a single worker on a 2-CPU machine,
    // which then waits, idle, on the services, browsers, databases and npm the tests start.
    // One more than the CPUs, at most 4 (each PostgreSQL test holds up to 30 connections of
    // the server's 100).
    maxWorkers: Math.min(4, availableParallelism() + 1),
    sequence: { sequencer: LongestFirst }
  }
})
