import { tagSearchPlans } from "../postgres/TagSearchPlan.ts"
import * as FreshDataDir from "./FreshDataDir.ts"

const freshDataDir = FreshDataDir.layer("animal-store-plan-")

tagSearchPlans("embedded", freshDataDir)
