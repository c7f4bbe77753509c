import { createHash } from "node:crypto"

/**
 * The fingerprint an IdempotentRequest carries: the hex SHA-256 of the request's identity
 * (createPetIdentity, placeOrderIdentity, createWebhookIdentity), so every store keeps 64
 * characters whatever the body. Kept answers are matched by it for 24 hours: changing it
 * would turn every retry of a kept create into a 422.
 */
export const fingerprintOf = (identity: string): string => createHash("sha256").update(identity).digest("hex")
