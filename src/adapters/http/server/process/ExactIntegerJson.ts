/**
 * A script for the docs page, run before Scalar: JSON text parsed and written back
 * unchanged keeps its integers above 2^53 digit for digit. Scalar's response pane shows
 * a body as `JSON.stringify(JSON.parse(body), null, 2)`, which would round
 * `9007199254740993` to `...992`.
 *
 * `JSON.parse` still returns plain numbers (Scalar's code generators and parameter fields
 * walk parsed values and expect them); it also remembers, for a text with such an
 * integer, the same value with those integers as `JSON.rawJSON` of their source digits.
 * `JSON.stringify` of that very value, while it still serializes as it did when parsed,
 * writes that exact twin instead. Anything else goes to the native functions untouched.
 * Needs `JSON.rawJSON` and the reviver's `context.source` (Chrome 114, Firefox 135,
 * Safari 18.4); without them the page keeps the native behaviour.
 */
export const script = String.raw`(() => {
  if (typeof JSON.rawJSON !== "function") return
  const { parse, stringify } = JSON
  const exact = new WeakMap()
  const hasUnsafeInteger = (text) =>
    (text.match(/\d{16,}/g) ?? []).some((digits) => !Number.isSafeInteger(Number(digits)))
  const keepDigits = (_key, value, context) =>
    typeof value === "number" && !Number.isSafeInteger(value) && /^-?\d+$/.test(context.source)
      ? JSON.rawJSON(context.source)
      : value
  JSON.parse = function (text, reviver) {
    const value = parse.apply(JSON, arguments)
    if (reviver === undefined && typeof value === "object" && value !== null && hasUnsafeInteger(String(text))) {
      exact.set(value, { serialized: stringify(value), digits: parse(text, keepDigits) })
    }
    return value
  }
  JSON.stringify = function (value, replacer, space) {
    const twin = replacer == null && typeof value === "object" && value !== null ? exact.get(value) : undefined
    return twin !== undefined && stringify(value) === twin.serialized
      ? stringify(twin.digits, null, space)
      : stringify.apply(JSON, arguments)
  }
})()`
