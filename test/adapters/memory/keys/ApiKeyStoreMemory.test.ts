import * as ApiKeyStoreMemory from "../../../../src/adapters/memory/keys/ApiKeyStoreMemory.ts"
import { apiKeyStoreContract } from "../../../ports/keys/ApiKeyStoreContract.ts"

apiKeyStoreContract("memory", ApiKeyStoreMemory.layer)
