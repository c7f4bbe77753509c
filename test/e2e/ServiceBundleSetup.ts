/**
 * Vitest global setup: the process tests run the service as `npm start` does, from the
 * bundle (scripts/bundle.ts), so it is brought up to date with `src/` before any test.
 */
import { bundleService } from "../../scripts/bundle.ts"

export const setup = async (): Promise<void> => {
  await bundleService()
}
