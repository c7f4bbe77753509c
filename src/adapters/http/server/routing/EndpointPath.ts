/**
 * Paths of the Api's endpoints with their parameters filled in, for `Location` and `Link`
 * headers: the endpoint's own path (e.g. `/v1/pets/:petId`), never a copy of it.
 */

/** A function writing `path` (with its `:name` parameters) for given parameter values; parsed once. */
export const pathOf = <Name extends string>(
  endpoint: { readonly path: string }
): (params: Readonly<Record<Name, string | bigint>>) => string => {
  const parts = endpoint.path.split(/:(\w+)/)
  // Odd indexes are parameter names, even ones the literal text between them.
  return (params) => {
    let path = parts[0]!
    for (let i = 1; i < parts.length; i += 2) {
      path += encodeURIComponent(String(params[parts[i] as Name])) + parts[i + 1]!
    }
    return path
  }
}
