/**
 * The `animal-store keys` command: create, list, revoke and rotate API keys through the
 * ApiKeyAdmin port, on whichever store `KeysProgram.ts` picks. A key is printed once, by
 * `create` and `rotate`, alone on stdout (so `KEY=$(animal-store keys create …)` works);
 * everything about it goes to stderr.
 */
import { Console, DateTime, Duration, Effect, type Layer, Redacted, Schema, SchemaTransformation } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import type { ApiKey } from "../../domain/keys/ApiKey.ts"
import { publicPrefix } from "../../domain/keys/KeyFormat.ts"
import { KeyName } from "../../domain/keys/KeyName.ts"
import { ApiKeyAdmin, type IssuedKey } from "../../ports/keys/ApiKeyAdmin.ts"
import { printTable } from "./TablePresenter.ts"

/** How long the old keys of a rotation keep working unless `--grace` says otherwise. */
export const DEFAULT_GRACE = "24h"

const SECONDS_PER_UNIT = { s: 1, m: 60, h: 3600, d: 86_400 } as const

/** A span written as a whole number and a unit: `30s`, `15m`, `24h`, `90d`. */
const Span = Schema.String.pipe(
  Schema.check(Schema.isPattern(/^[1-9]\d{0,5}[smhd]$/, { message: "expected a number and a unit: 30s, 15m, 24h or 90d" })),
  Schema.decodeTo(
    Schema.Duration,
    SchemaTransformation.transform({
      decode: (text: string) =>
        Duration.seconds(Number(text.slice(0, -1)) * SECONDS_PER_UNIT[text.at(-1) as keyof typeof SECONDS_PER_UNIT]),
      encode: (duration: Duration.Duration) => `${Duration.toSeconds(duration)}s`
    })
  )
)

const name = Flag.String("name").pipe(Flag.withSchema(KeyName), Flag.withDescription("A label for the key, e.g. the client's name"))

const time = (at: DateTime.Utc | undefined): string => at === undefined ? "-" : DateTime.formatIso(at)

const describe = (key: ApiKey): string =>
  `"${key.name}" (id ${key.id}, ${key.scope}, expires ${key.expiresAt === undefined ? "never" : time(key.expiresAt)})`

const printIssued = (issued: IssuedKey) =>
  Effect.andThen(
    Console.log(Redacted.value(issued.key)),
    Console.error(`Issued API key ${describe(issued.record)}. It is shown only now: store it safely.`)
  )

const create = Command.make(
  "create",
  {
    name,
    scope: Flag.Literals("scope", ["read", "write"]).pipe(
      Flag.withDescription("read: list and get; write: everything"),
      Flag.withDefault("write" as const)
    ),
    expiresIn: Flag.String("expires-in").pipe(
      Flag.withSchema(Span),
      Flag.withDescription("Lifetime (30s, 15m, 24h, 90d); without it the key lives until revoked"),
      Flag.optional
    )
  },
  Effect.fn(function*({ expiresIn, name, scope }) {
    const admin = yield* ApiKeyAdmin
    const issued = yield* admin.create({ name, scope, lifetime: expiresIn._tag === "Some" ? expiresIn.value : undefined })
    yield* printIssued(issued)
  })
).pipe(
  Command.withDescription("Issue a key and print it once"),
  Command.withExamples([{ command: "animal-store keys create --name ci --scope read --expires-in 90d", description: "A read key for 90 days" }])
)

const COLUMNS = ["NAME", "ID", "PREFIX", "SCOPE", "CREATED", "LAST USED", "EXPIRES", "REVOKED"] as const

const list = Command.make(
  "list",
  {},
  Effect.fn(function*() {
    const keys = yield* (yield* ApiKeyAdmin).list
    const rows = keys.map((key) => [
      key.name,
      key.id,
      `${publicPrefix(key.id)}_…`,
      key.scope,
      time(key.createdAt),
      time(key.lastUsedAt),
      time(key.expiresAt),
      time(key.revokedAt)
    ])
    yield* printTable(COLUMNS, rows)
  })
).pipe(Command.withDescription("List every key (never the key itself): name, id, prefix, scope, times"))

const revoke = Command.make(
  "revoke",
  { ref: Argument.String("name-or-id").pipe(Argument.withDescription("A key's id, or a name (revokes every live key of that name)")) },
  Effect.fn(function*({ ref }) {
    const revoked = yield* (yield* ApiKeyAdmin).revoke(ref)
    for (const key of revoked) yield* Console.log(`Revoked ${describe(key)} at ${time(key.revokedAt)}`)
  })
).pipe(Command.withDescription("Revoke a key at once, on every instance"))

const rotate = Command.make(
  "rotate",
  {
    name: Argument.String("name").pipe(Argument.withSchema(KeyName), Argument.withDescription("The name of the key to replace")),
    grace: Flag.String("grace").pipe(
      Flag.withSchema(Span),
      Flag.withDescription("How long the old key keeps working (30s, 15m, 24h, 90d)"),
      Flag.withDefault(Duration.hours(24))
    )
  },
  Effect.fn(function*({ grace, name }) {
    const { issued, previous } = yield* (yield* ApiKeyAdmin).rotate(name, grace)
    yield* printIssued(issued)
    for (const key of previous) yield* Console.error(`The old key ${key.id} keeps working until ${time(key.expiresAt)}.`)
  })
).pipe(Command.withDescription(`Issue a new key for a name; the old one keeps working for a grace period (default ${DEFAULT_GRACE})`))

/**
 * The command and its subcommands, managing the keys `admin` reaches. The layer is built
 * only when a subcommand runs, so `--help` needs no store.
 */
export const make = <E>(admin: Layer.Layer<ApiKeyAdmin, E>) =>
  Command.make("keys").pipe(
    Command.withDescription(
      "Manage Animal Store API keys on the configured store (STORE, DATABASE_URL, DATA_DIR, as for the service)"
    ),
    Command.withSubcommands([
      create.pipe(Command.provide(admin)),
      list.pipe(Command.provide(admin)),
      revoke.pipe(Command.provide(admin)),
      rotate.pipe(Command.provide(admin))
    ])
  )
