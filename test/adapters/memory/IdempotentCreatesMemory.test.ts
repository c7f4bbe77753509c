import * as StoreMemory from "../../../src/adapters/memory/StoreMemory.ts"
import { CONTRACT_OPTIONS, idempotentCreatesContract } from "../../ports/IdempotentCreatesContract.ts"

idempotentCreatesContract("memory", StoreMemory.layerWith(CONTRACT_OPTIONS))
