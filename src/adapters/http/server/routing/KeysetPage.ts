/**
 * A page of a keyset listing from `rows`, fetched with one row more than `limit`: that
 * extra row says whether a next page exists without a count query. When it does, `link`
 * is the `Link: <...>; rel="next"` header value, repeating the query's filters
 * (`filters`, in order; an array value repeats its parameter) with the cursor of the
 * page's last row, named `cursorName` (default `cursor`).
 */
export const keysetPage = <A>(
  rows: ReadonlyArray<A>,
  options: {
    readonly limit: number
    readonly path: string
    readonly filters: ReadonlyArray<
      readonly [name: string, value: string | bigint | ReadonlyArray<string> | undefined]
    >
    readonly cursorOf: (last: A) => string
    readonly cursorName?: string | undefined
  }
): { readonly page: ReadonlyArray<A>; readonly link: string | undefined } => {
  const page = rows.slice(0, options.limit)
  const last = page[page.length - 1]
  if (rows.length <= options.limit || last === undefined) return { page, link: undefined }
  const next = new URLSearchParams({ limit: String(options.limit) })
  for (const [name, value] of options.filters) {
    if (typeof value === "object") for (const each of value) next.append(name, each)
    else if (value !== undefined) next.set(name, String(value))
  }
  next.set(options.cursorName ?? "cursor", options.cursorOf(last))
  return { page, link: `<${options.path}?${next}>; rel="next"` }
}
