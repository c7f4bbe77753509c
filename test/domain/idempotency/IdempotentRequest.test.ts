import { describe, expect, it } from "vitest"
import { Schema } from "effect"
import { CategoryId } from "../../../src/domain/pets/CategoryId.ts"
import { IdempotencyKey } from "../../../src/domain/idempotency/IdempotencyKey.ts"
import {
  createPetIdentity,
  createWebhookIdentity,
  placeOrderIdentity
} from "../../../src/domain/idempotency/IdempotentRequest.ts"
import { isExpired } from "../../../src/domain/idempotency/KeptAnswer.ts"
import { NewPet } from "../../../src/domain/pets/NewPet.ts"
import { PetId } from "../../../src/domain/pets/PetId.ts"
import { PetName } from "../../../src/domain/pets/PetName.ts"

const pet = (name: string, categoryId: bigint, status?: "available") =>
  new NewPet(
    status === undefined
      ? { name: PetName.make(name), categoryId: CategoryId.make(categoryId) }
      : { name: PetName.make(name), categoryId: CategoryId.make(categoryId), status }
  )

describe("IdempotencyKey", () => {
  const valid = Schema.is(IdempotencyKey)
  it("is 1–255 visible ASCII characters, taken as sent", () => {
    for (const key of ["a", "~".repeat(255), `"8e03978e-40d5-43e8-bc93-6894a57f9324"`, "!#$%&'()*+,-./:;<=>?@[\\]^_`{|}"]) {
      expect(valid(key), key).toBe(true)
    }
    for (const key of ["", "x".repeat(256), "a b", "a\tb", "\u007f", "café", "a\u0000"]) expect(valid(key), key).toBe(false)
  })
})

describe("request identities", () => {
  it("are the same for the same decoded pet, different for any value the create uses, and per operation", () => {
    const rex = createPetIdentity(pet("Rex", 9007199254740993n, "available"))
    expect(createPetIdentity(pet("Rex", 9007199254740993n, "available"))).toBe(rex)
    const others = [
      createPetIdentity(pet("Rex", 9007199254740992n, "available")),
      createPetIdentity(pet("Rex", 9007199254740993n)),
      createPetIdentity(pet("Rex ", 9007199254740993n, "available")),
      placeOrderIdentity(PetId.make(9007199254740993n))
    ]
    expect(new Set([rex, ...others]).size).toBe(5)
    // A name that spells another field cannot collide: the input is a JSON array, not joined text.
    expect(createPetIdentity(pet("a\",\"1", 2n))).not.toBe(createPetIdentity(pet("a", 12n)))
  })

  it("of a webhook: the URL as sent and the types in their order", () => {
    const hook = createWebhookIdentity({ url: "https://hooks.example.com/in", types: ["pet.created", "order.placed"] })
    expect(createWebhookIdentity({ url: "https://hooks.example.com/in", types: ["pet.created", "order.placed"] })).toBe(hook)
    const others = [
      createWebhookIdentity({ url: "https://hooks.example.com/in/", types: ["pet.created", "order.placed"] }),
      createWebhookIdentity({ url: "https://HOOKS.example.com/in", types: ["pet.created", "order.placed"] }),
      createWebhookIdentity({ url: "https://hooks.example.com/in", types: ["order.placed", "pet.created"] }),
      createWebhookIdentity({ url: "https://hooks.example.com/in", types: ["pet.created"] }),
      createPetIdentity(pet("https://hooks.example.com/in", 1n))
    ]
    expect(new Set([hook, ...others]).size).toBe(6)
  })
})

describe("isExpired", () => {
  it("forgets an answer exactly 24 hours after it was kept", () => {
    const day = 24 * 60 * 60 * 1000
    expect(isExpired(0, day - 1)).toBe(false)
    expect(isExpired(0, day)).toBe(true)
  })
})
