import { Schema } from "effect"
import { HttpApiSchema } from "effect/http-api"
import { LosslessJsonBody } from "./JsonInt64.ts"

/** A page of a list: its JSON body, and a `Link: <...>; rel="next"` header when more exist (keyset paging). */
export const PageBody = <S extends Schema.Top>(page: S) =>
  HttpApiSchema.WithHeaders(LosslessJsonBody(page), { link: Schema.optionalKey(Schema.String) })
