/**
 * The one contract of ApiKeyStore, run on every store (memory, embedded, PostgreSQL),
 * together with what is built on it the same way everywhere: key management
 * (ApiKeyAdminLocal) and verification from the in-memory copy (ApiKeysCached).
 */
import { assert, layer } from "@effect/vitest"
import { Context, DateTime, Duration, Effect, Exit, Layer, Option, Redacted, Scope, Stream } from "effect"
import { createHash } from "node:crypto"
import * as ApiKeyAdminLocal from "../../../src/application/keys/ApiKeyAdminLocal.ts"
import * as ApiKeysCached from "../../../src/adapters/apikeys/ApiKeysCached.ts"
import { issue } from "../../../src/application/keys/KeyIssuer.ts"
import { ApiKey } from "../../../src/domain/keys/ApiKey.ts"
import { parseKeyId } from "../../../src/domain/keys/KeyFormat.ts"
import { KeyName } from "../../../src/domain/keys/KeyName.ts"
import { ApiKeyAdmin } from "../../../src/ports/keys/ApiKeyAdmin.ts"
import { ApiKeys } from "../../../src/ports/keys/ApiKeys.ts"
import { ApiKeyStore } from "../../../src/ports/keys/ApiKeyStore.ts"

const at = (iso: string) => DateTime.makeUnsafe(iso)
const record = (name: string, createdAt = at("2026-01-01T00:00:00.000Z")) =>
  issue({ name: KeyName.make(name), scope: "write", lifetime: undefined }, createdAt).record
const millis = (time: DateTime.Utc | undefined) => time === undefined ? undefined : DateTime.toEpochMillis(time)
const byId = (id: string) => Effect.map(Effect.flatMap(ApiKeyStore, (store) => store.list), (keys) => keys.find((key) => key.id === id))

// Polls until `probe` holds: key changes reach the cache through a fiber, not synchronously.
const eventually = <E, R>(probe: Effect.Effect<boolean, E, R>, what: string) =>
  Effect.gen(function*() {
    for (let i = 0; i < 100; i++) {
      if (yield* probe) return
      yield* Effect.sleep("10 millis")
    }
    assert.fail(`not within 1 s: ${what}`)
  })

/** Runs the contract against `store`; it must start empty. */
export const apiKeyStoreContract = (name: string, store: Layer.Layer<ApiKeyStore, unknown>, options?: { readonly timeout?: number }) =>
  layer(Layer.provideMerge(ApiKeyAdminLocal.layer, store), { timeout: options?.timeout ?? 60_000, excludeTestServices: true })(
    `ApiKeyStore contract: ${name}`,
    (it) => {
      it.effect("insertIfEmpty adds the first key only, even when asked concurrently", () =>
        Effect.gen(function*() {
          const store = yield* ApiKeyStore
          const results = yield* Effect.forEach(
            ["boot-1", "boot-2", "boot-3"],
            (name) => store.insertIfEmpty(record(name)),
            { concurrency: "unbounded" }
          )
          assert.deepStrictEqual(results.filter(Boolean).length, 1)
          assert.strictEqual((yield* store.list).length, 1)
          assert.isFalse(yield* store.insertIfEmpty(record("boot-4")))
        }))

      it.effect("a key round-trips: every field, the digest and never the key", () =>
        Effect.gen(function*() {
          const store = yield* ApiKeyStore
          const key = issue(
            { name: KeyName.make("round trip ✓"), scope: "read", lifetime: Duration.days(90) },
            at("2026-03-04T05:06:07.089Z")
          )
          yield* store.insert(key.record)
          const stored = yield* byId(key.record.id)
          assert.deepStrictEqual(stored, key.record)
          assert.strictEqual(stored?.digest, createHash("sha256").update(Redacted.value(key.key)).digest("hex"))
          assert.strictEqual(millis(stored?.expiresAt), Date.parse("2026-06-02T05:06:07.089Z"))
        }))

      it.effect("revoke keeps the first revocation time; expire sets the expiry; touch only moves forward", () =>
        Effect.gen(function*() {
          const store = yield* ApiKeyStore
          const key = record("lifecycle")
          yield* store.insert(key)
          yield* store.revoke([key.id], at("2026-02-01T00:00:00.000Z"))
          yield* store.revoke([key.id], at("2026-02-02T00:00:00.000Z"))
          assert.strictEqual(millis((yield* byId(key.id))?.revokedAt), Date.parse("2026-02-01T00:00:00.000Z"))

          yield* store.expire([[key.id, at("2026-05-01T00:00:00.000Z")]])
          assert.strictEqual(millis((yield* byId(key.id))?.expiresAt), Date.parse("2026-05-01T00:00:00.000Z"))

          yield* store.touch([[key.id, at("2026-02-03T00:00:00.000Z")]])
          yield* store.touch([[key.id, at("2026-02-02T12:00:00.000Z")]])
          assert.strictEqual(millis((yield* byId(key.id))?.lastUsedAt), Date.parse("2026-02-03T00:00:00.000Z"))
        }))

      it.effect("rotate sets the expiries and adds the successor as one change: a successor refused changes nothing", () =>
        Effect.gen(function*() {
          const store = yield* ApiKeyStore
          const old = record("rotating")
          yield* store.insert(old)
          const graceEnd = at("2026-01-02T00:00:00.000Z")
          const before = yield* store.list

          // A successor whose id is taken (a defect): the expiry written before its insert is undone.
          const clash = new ApiKey({ ...record("rotating"), id: old.id }, { disableChecks: true })
          const refused = yield* Effect.exit(store.rotate(clash, [[old.id, graceEnd]]))
          assert.isTrue(Exit.isFailure(refused))
          assert.deepStrictEqual(yield* store.list, before)

          const successor = record("rotating")
          yield* store.rotate(successor, [[old.id, graceEnd]])
          assert.deepStrictEqual(yield* byId(successor.id), successor)
          assert.strictEqual(millis((yield* byId(old.id))?.expiresAt), DateTime.toEpochMillis(graceEnd))
          assert.strictEqual((yield* store.list).length, before.length + 1)
        }))

      it.effect("changes: a writer's insert, revoke, expiry and rotation each reach a subscriber", () =>
        Effect.gen(function*() {
          const store = yield* ApiKeyStore
          const key = record("watched")
          for (
            const write of [
              store.insert(key),
              store.revoke([key.id], at("2026-02-01T00:00:00.000Z")),
              store.expire([[key.id, at("2026-03-01T00:00:00.000Z")]]),
              store.rotate(record("watched"), [[key.id, at("2026-03-02T00:00:00.000Z")]])
            ]
          ) {
            const signal = yield* Effect.scoped(Effect.gen(function*() {
              const changes = yield* store.changes
              yield* write
              return yield* Stream.runHead(changes).pipe(Effect.timeout("2 seconds"))
            }))
            assert.isTrue(Option.isSome(signal))
          }
        }))

      it.effect("admin: create issues a random as_ key once; a live name is refused; revoke by name or id; unknown refs", () =>
        Effect.gen(function*() {
          const admin = yield* ApiKeyAdmin
          const first = yield* admin.create({ name: KeyName.make("client"), scope: "read", lifetime: undefined })
          const text = Redacted.value(first.key)
          assert.match(text, /^as_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/)
          assert.deepStrictEqual(parseKeyId(text), Option.some(first.record.id))
          assert.strictEqual(first.record.digest, createHash("sha256").update(text).digest("hex"))
          assert.notInclude(JSON.stringify(yield* admin.list), text)

          const again = yield* Effect.flip(admin.create({ name: KeyName.make("client"), scope: "write", lifetime: undefined }))
          assert.strictEqual(again._tag, "KeyNameInUse")

          const revoked = yield* admin.revoke("client")
          assert.deepStrictEqual(revoked.map((key) => key.id), [first.record.id])
          assert.isDefined(revoked[0]?.revokedAt)
          // Revoked, not missing: the refusal says so, and when.
          const revokedAgain = yield* Effect.flip(admin.revoke("client"))
          assert.strictEqual(revokedAgain._tag === "KeyNotFound" ? millis(revokedAgain.revokedAt) : revokedAgain._tag, millis(revoked[0]?.revokedAt))
          const rotatedRevoked = yield* Effect.flip(admin.rotate(KeyName.make("client"), Duration.hours(1)))
          assert.strictEqual(
            rotatedRevoked.message,
            `the API key "client" was revoked at ${DateTime.formatIso(revoked[0]!.revokedAt!)}; ` +
              "create a new one with `create --name client`"
          )
          const unknown = yield* Effect.flip(admin.revoke("000000000000"))
          assert.strictEqual(unknown._tag, "KeyNotFound")
          assert.strictEqual(unknown.message, `no API key named or with id "000000000000"`)

          // Revoked, the name is free again; by id revokes that key only.
          const second = yield* admin.create({ name: KeyName.make("client"), scope: "write", lifetime: undefined })
          assert.notStrictEqual(Redacted.value(second.key), text)
          assert.deepStrictEqual((yield* admin.revoke(second.record.id)).map((key) => key.id), [second.record.id])
        }))

      it.effect("admin: rotate issues a new key of the same name and scope; the old one expires after the grace", () =>
        Effect.gen(function*() {
          const admin = yield* ApiKeyAdmin
          const old = yield* admin.create({ name: KeyName.make("rotated"), scope: "read", lifetime: undefined })
          const { issued, previous } = yield* admin.rotate(KeyName.make("rotated"), Duration.hours(24))
          assert.strictEqual(issued.record.name, "rotated")
          assert.strictEqual(issued.record.scope, "read")
          assert.deepStrictEqual(previous.map((key) => key.id), [old.record.id])
          const graceEnd = DateTime.toEpochMillis(issued.record.createdAt) + Duration.toMillis(Duration.hours(24))
          assert.strictEqual(millis(previous[0]?.expiresAt), graceEnd)
          assert.strictEqual((yield* Effect.flip(admin.rotate(KeyName.make("no such key"), Duration.hours(1))))._tag, "KeyNotFound")
        }))

      it.effect("verify: a new key works at once, a revoked one stops, an expired one is refused, API_KEYS too", () =>
        Effect.gen(function*() {
          const admin = yield* ApiKeyAdmin
          const scope = yield* Scope.make()
          const keys = yield* Layer.buildWithScope(ApiKeysCached.layer([Redacted.make("fixed-env-key")]), scope)
          const verify = (key: Redacted.Redacted<string>) => Context.get(keys, ApiKeys).verify(key)
          const accepted = (key: Redacted.Redacted<string>) => Effect.map(verify(key), (caller) => Option.isSome(caller))
          // Asked at once, before the fixed key's id is derived (tens of ms): it waits for it.
          assert.deepStrictEqual(
            Option.map(yield* verify(Redacted.make("fixed-env-key")), (c) => /^env-[0-9a-f]{12}$/.test(c.keyId)),
            Option.some(true)
          )

          const reader = yield* admin.create({ name: KeyName.make("verified"), scope: "read", lifetime: undefined })
          yield* eventually(accepted(reader.key), "a new key accepted")
          const caller = yield* verify(reader.key)
          assert.deepStrictEqual(Option.map(caller, (c) => [c.keyId, c.scope]), Option.some([reader.record.id, "read"]))
          assert.deepStrictEqual(
            Option.map(yield* verify(Redacted.make("fixed-env-key")), (c) => c.scope),
            Option.some("write")
          )
          // The right id with a wrong secret, and a malformed key, are refused.
          const wrong = Redacted.make(`${Redacted.value(reader.key).slice(0, -1)}${Redacted.value(reader.key).endsWith("A") ? "B" : "A"}`)
          assert.isFalse(yield* accepted(wrong))
          assert.isFalse(yield* accepted(Redacted.make("as_nope")))

          yield* admin.revoke(reader.record.id)
          yield* eventually(Effect.map(accepted(reader.key), (ok) => !ok), "a revoked key refused")

          const shortLived = yield* admin.create({ name: KeyName.make("short"), scope: "write", lifetime: Duration.millis(300) })
          yield* eventually(accepted(shortLived.key), "a short-lived key accepted")
          yield* Effect.sleep("350 millis")
          assert.isFalse(yield* accepted(shortLived.key))

          // Last uses are written when the cache closes (and every minute): the store records the use.
          const user = yield* admin.create({ name: KeyName.make("used"), scope: "read", lifetime: undefined })
          yield* eventually(accepted(user.key), "a used key accepted")
          yield* Scope.close(scope, Exit.void)
          assert.isDefined((yield* byId(user.record.id))?.lastUsedAt)
        }))
    }
  )

