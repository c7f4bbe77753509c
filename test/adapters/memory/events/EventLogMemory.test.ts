import * as StoreMemory from "../../../../src/adapters/memory/StoreMemory.ts"
import { eventLogContract } from "../../../ports/events/EventLogContract.ts"

eventLogContract("memory", StoreMemory.layer, { runs: 100, writers: 4 })
