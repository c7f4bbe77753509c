import * as PetRepositoryMemory from "../../../src/adapters/memory/PetRepositoryMemory.ts"
import { petRepositoryContract } from "../../ports/PetRepositoryContract.ts"

petRepositoryContract("memory", PetRepositoryMemory.layer, { runs: 100 })
