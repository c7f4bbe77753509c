import { Layer } from "effect"
import * as ApiKeyStoreSql from "../../../src/adapters/postgres/keys/ApiKeyStoreSql.ts"
import { apiKeyStoreContract } from "../../ports/keys/ApiKeyStoreContract.ts"
import * as FreshDataDir from "./FreshDataDir.ts"

const freshDataDir = FreshDataDir.layer("animal-store-keys-")

apiKeyStoreContract(
  "embedded",
  ApiKeyStoreSql.layer({ timeout: "10 seconds", listen: false }).pipe(Layer.provide(freshDataDir)),
  { timeout: 120_000 }
)
