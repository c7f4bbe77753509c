import * as StoreMemory from "../../../../src/adapters/memory/StoreMemory.ts"
import { photoRepositoryContract } from "../../../ports/photos/PhotoRepositoryContract.ts"

photoRepositoryContract("memory", StoreMemory.layer)
