import { Schema } from "effect"

// "a", "a and b", "a, b and c".
const listed = (names: ReadonlyArray<string>): string =>
  names.length <= 1 ? names.join("") : `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}`

/**
 * A JSON merge patch body that may name only the `fields` struct's keys: any other key is
 * refused, each by name (a struct alone would drop them before any check could see them),
 * then the body decodes as `fields`.
 */
export const patchBody = <Fields extends Schema.Struct.Fields>(fields: Schema.Struct<Fields>) => {
  const allowed: ReadonlyArray<string> = Object.keys(fields.fields)
  const onlyAllowed = Schema.makeFilter((body: { readonly [key: string]: unknown }) =>
    Object.keys(body).filter((key) => !allowed.includes(key)).map((key) => ({
      path: [key],
      issue: `is not allowed: a patch may change only ${listed(allowed)}`
    }))
  )
  return Schema.Record(Schema.String, Schema.Unknown).check(onlyAllowed).pipe(Schema.decodeTo(fields))
}
