import { Schema, SchemaIssue } from "effect"
import { PetId } from "./PetId.ts"

/** No pet has the requested id. */
export class PetNotFound extends Schema.TaggedError<PetNotFound>()("PetNotFound", {
  id: PetId
}) {
  override get message(): string {
    return `pet ${this.id} not found`
  }
}

const issueFormatter = SchemaIssue.makeFormatterStandardSchemaV1({
  leafHook: (issue) => {
    const annotated = "annotations" in issue ? issue.annotations?.["message"] : undefined
    if (typeof annotated === "string") return annotated
    switch (issue._tag) {
      case "MissingKey":
        return "is required"
      case "UnexpectedKey":
        return "is not allowed"
      case "InvalidType": {
        const expected = issue.ast.annotations?.["expected"]
        return typeof expected === "string" ? `expected ${expected}` : "has the wrong type"
      }
      default:
        return "is invalid"
    }
  }
})

const formatPath = (path: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }>): string =>
  path.reduce<string>((acc, segment) => {
    const key = typeof segment === "object" ? segment.key : segment
    return typeof key === "number" ? `${acc}[${key}]` : acc === "" ? String(key) : `${acc}.${String(key)}`
  }, "")

/** Input broke a domain rule; the message names the field and the rule. */
export class InvalidInput extends Schema.TaggedError<InvalidInput>()("InvalidInput", {
  message: Schema.String
}) {
  /** Builds the message `field: what was wrong` (issues joined by "; ") from a schema issue. */
  static fromIssue(issue: SchemaIssue.Issue, root?: string): InvalidInput {
    const message = issueFormatter(issue).issues
      .map(({ message, path = [] }) => {
        const where = formatPath(root === undefined ? path : [root, ...path])
        return where === "" ? message : `${where}: ${message}`
      })
      .join("; ")
    return new InvalidInput({ message })
  }
}

/** The caller presented no credential, or one that is not valid. */
export class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", {
  credential: Schema.Literals(["missing", "invalid"])
}) {
  override get message(): string {
    return this.credential === "missing"
      ? "an API key is required: send Authorization: Bearer <key>"
      : "the API key is not valid"
  }
}

/** The resource existed once but its operation has been withdrawn. */
export class Gone extends Schema.TaggedError<Gone>()("Gone", {
  message: Schema.String
}) {}

/** The store cannot be reached or did not answer in time; the request may be retried. */
export class StoreUnavailable extends Schema.TaggedError<StoreUnavailable>()("StoreUnavailable", {
  message: Schema.String
}) {}
