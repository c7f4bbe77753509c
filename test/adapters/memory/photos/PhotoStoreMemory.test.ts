import * as PhotoStoreMemory from "../../../../src/adapters/memory/photos/PhotoStoreMemory.ts"
import { photoStoreContract } from "../../../ports/photos/PhotoStoreContract.ts"

photoStoreContract("memory", PhotoStoreMemory.layer)
