/**
 * The `animal-store webhooks` command: add, list, remove webhook subscriptions and rotate
 * their secrets through the WebhookAdmin port, on whichever store `WebhooksProgram.ts` picks.
 * A secret is printed once, by `add` and `rotate`, alone on stdout (so
 * `SECRET=$(animal-store webhooks add …)` works); everything about it goes to stderr.
 */
import { Console, DateTime, Effect, type Layer, Schema, SchemaTransformation } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { EventType } from "../../domain/events/EventType.ts"
import { WebhookId } from "../../domain/webhooks/WebhookId.ts"
import { WebhookEventTypes, type WebhookSubscription } from "../../domain/webhooks/WebhookSubscription.ts"
import { WebhookAdmin } from "../../ports/webhooks/WebhookAdmin.ts"
import { printTable } from "./TablePresenter.ts"

// `pet.created,order.placed`: the event types, comma-separated.
const Types = Schema.String.pipe(
  Schema.decodeTo(
    WebhookEventTypes,
    SchemaTransformation.transform({
      // WebhookEventTypes checks what this returns; the cast only states the type it checks for.
      decode: (text: string) => text.split(",").map((type) => type.trim()) as unknown as typeof WebhookEventTypes.Encoded,
      encode: (types: typeof WebhookEventTypes.Encoded) => types.join(",")
    })
  )
)

const idArgument = Argument.String("id").pipe(
  Argument.withSchema(
    Schema.String.check(Schema.isPattern(/^[1-9]\d{0,18}$/, { message: "expected a webhook id" })).pipe(
      Schema.decodeTo(WebhookId, SchemaTransformation.transform({ decode: BigInt, encode: String }))
    )
  ),
  Argument.withDescription("The subscription's id")
)

const describe = (webhook: WebhookSubscription): string =>
  `${webhook.id} ${webhook.url} (${webhook.types.join(",")})`

const add = Command.make(
  "add",
  {
    url: Flag.String("url").pipe(Flag.withDescription("Where deliveries are POSTed (https, a public host)")),
    types: Flag.String("types").pipe(
      Flag.withSchema(Types),
      Flag.withDescription(`The event types, comma-separated: ${EventType.literals.join(", ")}`)
    )
  },
  Effect.fn(function*({ types, url }) {
    const { secret, webhook } = yield* (yield* WebhookAdmin).add({ url, types })
    yield* Console.log(secret)
    yield* Console.error(`Subscribed webhook ${describe(webhook)}. Its secret is shown only now: store it safely.`)
  })
).pipe(
  Command.withDescription("Subscribe a URL to event types and print its signing secret once"),
  Command.withExamples([{
    command: "animal-store webhooks add --url https://hooks.example.com/in --types pet.created,order.placed",
    description: "New pets and orders"
  }])
)

const COLUMNS = ["ID", "URL", "TYPES", "CREATED", "STATE"] as const

const list = Command.make(
  "list",
  {},
  Effect.fn(function*() {
    const webhooks = yield* (yield* WebhookAdmin).list
    const rows = webhooks.map((webhook) => [
      String(webhook.id),
      webhook.url,
      webhook.types.join(","),
      DateTime.formatIso(webhook.createdAt),
      webhook.state._tag === "active" ? "active" : `disabled: ${webhook.state.reason}`
    ])
    yield* printTable(COLUMNS, rows)
  })
).pipe(Command.withDescription("List every subscription (never its secret)"))

const remove = Command.make(
  "remove",
  { id: idArgument },
  Effect.fn(function*({ id }) {
    const webhook = yield* (yield* WebhookAdmin).remove(id)
    yield* Console.log(`Removed webhook ${describe(webhook)}`)
  })
).pipe(Command.withDescription("Remove a subscription and its delivery attempts"))

const rotate = Command.make(
  "rotate",
  { id: idArgument },
  Effect.fn(function*({ id }) {
    const { previousSignsUntil, secret, webhook } = yield* (yield* WebhookAdmin).rotate(id)
    yield* Console.log(secret)
    yield* Console.error(
      `New secret for webhook ${describe(webhook)}, shown only now. ` +
        `The old one still signs until ${DateTime.formatIso(previousSignsUntil)}.`
    )
  })
).pipe(Command.withDescription("Make a new signing secret; the old one still signs for 24 hours"))

/**
 * The command and its subcommands, on the subscriptions `admin` reaches. The layer is
 * built only when a subcommand runs, so `--help` needs no store.
 */
export const make = <E>(admin: Layer.Layer<WebhookAdmin, E>) =>
  Command.make("webhooks").pipe(
    Command.withDescription(
      "Manage Animal Store webhook subscriptions on the configured store (STORE, DATABASE_URL, DATA_DIR, as for the service)"
    ),
    Command.withSubcommands([
      add.pipe(Command.provide(admin)),
      list.pipe(Command.provide(admin)),
      remove.pipe(Command.provide(admin)),
      rotate.pipe(Command.provide(admin))
    ])
  )
