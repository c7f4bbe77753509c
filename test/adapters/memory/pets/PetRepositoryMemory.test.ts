import * as PetRepositoryMemory from "../../../../src/adapters/memory/pets/PetRepositoryMemory.ts"
import { petRepositoryContract } from "../../../ports/pets/PetRepositoryContract.ts"

petRepositoryContract("memory", PetRepositoryMemory.layer, { runs: 100 })
