/**
 * Trace export over OTLP/HTTP (JSON), configured only by the standard OpenTelemetry
 * variables: on when `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`)
 * is set, with `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_EXPORTER_OTLP_HEADERS`
 * and the `OTEL_BSP_*` batch settings as effect's OtlpTracer reads them. When it is off the
 * native tracer stays, and the HTTP server skips its span bookkeeping.
 *
 * `OTEL_TRACES_EXPORTER` defaults to `otlp`, as the OpenTelemetry specification says
 * (effect's default is none); `none` turns export off with the endpoint still set.
 */
import { Config, ConfigProvider, Effect, Layer, Option } from "effect"
import { FetchHttpClient } from "effect/http"
import { OtlpSerialization, OtlpTracer } from "effect/observability"

/** The service name when neither `OTEL_SERVICE_NAME` nor `OTEL_RESOURCE_ATTRIBUTES` gives one. */
export const SERVICE_NAME = "animal-store"

export const layer = Layer.unwrap(Effect.gen(function*() {
  const named = yield* Config.option(Config.String("OTEL_SERVICE_NAME"))
  const attributes = yield* Config.String("OTEL_RESOURCE_ATTRIBUTES").pipe(Config.withDefault(""))
  // OtlpTracer prefers a name given here over the environment's, so give one only as the fallback.
  const fallback = Option.isNone(named) && !/(^|,)\s*service\.name\s*=/.test(attributes)
  return OtlpTracer.layerFromConfig(fallback ? { resource: { serviceName: SERVICE_NAME } } : {})
})).pipe(
  Layer.provide([
    OtlpSerialization.layerJson,
    FetchHttpClient.layer,
    ConfigProvider.layerAdd(ConfigProvider.fromUnknown({ OTEL_TRACES_EXPORTER: "otlp" }))
  ])
)
