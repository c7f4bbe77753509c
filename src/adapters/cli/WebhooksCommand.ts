/**
 * The `animal-store-webhooks` command: add, list, remove webhook subscriptions and rotate
 * their secrets, on the store `webhooksMain.ts` picks. A secret is printed once, by `add`
 * and `rotate`, alone on stdout (so `SECRET=$(animal-store-webhooks add …)` works);
 * everything about it goes to stderr.
 */
import { Console, DateTime, Effect, type Layer, Schema, SchemaTransformation } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { EventType } from "../../domain/events/EventType.ts"
import { WebhookId } from "../../domain/webhooks/WebhookId.ts"
import { SECRET_ROTATION_OVERLAP } from "../../domain/webhooks/WebhookSecret.ts"
import { WebhookEventTypes, type WebhookSubscription } from "../../domain/webhooks/WebhookSubscription.ts"
import { EventLog } from "../../ports/events/EventLog.ts"
import { WebhookRepository } from "../../ports/webhooks/WebhookRepository.ts"
import { WebhookSender } from "../../ports/webhooks/WebhookSender.ts"
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
    const checked = yield* (yield* WebhookSender).check(url)
    const after = yield* (yield* EventLog).latest
    const { secret, webhook } = yield* (yield* WebhookRepository).create({
      url: checked,
      types,
      createdAt: yield* DateTime.now,
      after
    })
    yield* Console.log(secret)
    yield* Console.error(`Subscribed webhook ${describe(webhook)}. Its secret is shown only now: store it safely.`)
  })
).pipe(
  Command.withDescription("Subscribe a URL to event types and print its signing secret once"),
  Command.withExamples([{
    command: "animal-store-webhooks add --url https://hooks.example.com/in --types pet.created,order.placed",
    description: "New pets and orders"
  }])
)

const COLUMNS = ["ID", "URL", "TYPES", "CREATED", "STATE"] as const

const list = Command.make(
  "list",
  {},
  Effect.fn(function*() {
    const webhooks = yield* (yield* WebhookRepository).list
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
    const webhooks = yield* WebhookRepository
    const webhook = yield* webhooks.get(id)
    yield* webhooks.delete(webhook.id)
    yield* Console.log(`Removed webhook ${describe(webhook)}`)
  })
).pipe(Command.withDescription("Remove a subscription and its delivery attempts"))

const rotate = Command.make(
  "rotate",
  { id: idArgument },
  Effect.fn(function*({ id }) {
    const now = yield* DateTime.now
    const { secret, webhook } = yield* (yield* WebhookRepository).rotateSecret(id, now, SECRET_ROTATION_OVERLAP)
    yield* Console.log(secret)
    yield* Console.error(
      `New secret for webhook ${describe(webhook)}, shown only now. ` +
        `The old one still signs until ${DateTime.formatIso(DateTime.addDuration(now, SECRET_ROTATION_OVERLAP))}.`
    )
  })
).pipe(Command.withDescription("Make a new signing secret; the old one still signs for 24 hours"))

/**
 * The command and its subcommands, on the subscriptions `store` reaches. The layer is
 * built only when a subcommand runs, so `--help` needs no store.
 */
export const make = <E>(store: Layer.Layer<WebhookRepository | EventLog | WebhookSender, E>) =>
  Command.make("animal-store-webhooks").pipe(
    Command.withDescription(
      "Manage Animal Store webhook subscriptions on the configured store (STORE, DATABASE_URL, DATA_DIR, as for the service)"
    ),
    Command.withSubcommands([
      add.pipe(Command.provide(store)),
      list.pipe(Command.provide(store)),
      remove.pipe(Command.provide(store)),
      rotate.pipe(Command.provide(store))
    ])
  )
