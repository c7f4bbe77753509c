import { Context, Layer, Redacted } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import { HttpApiClient } from "effect/http-api"
import { Api } from "../api/Api.ts"

/** How to reach an Animal Store service. */
export interface ClientOptions {
  /** The base address, with or without its `/v1` segment: `https://pets.example.com/v1`. */
  readonly baseUrl: string | URL
  /** The bearer API key. */
  readonly apiKey: Redacted.Redacted<string> | string
}

// The API's paths already start with /v1, while the spec's base addresses end with it.
const origin = (baseUrl: string | URL): string => String(baseUrl).replace(/\/+$/, "").replace(/\/v1$/, "")

/**
 * A typed client for the Animal Store HTTP API, derived from the same API definition as
 * the server: `client.animals.getPet({ params: { petId } })` returns a `Pet`-shaped value
 * or fails with the typed `NotFound`, `Unauthorized`, `InvalidRequest`… errors. int64
 * fields are `bigint`, exact in both directions.
 */
export class AnimalStoreClient extends Context.Service<AnimalStoreClient, HttpApiClient.ForApi<typeof Api>>()(
  "animal-store/http/AnimalStoreClient"
) {
  /** Builds the client on the HttpClient in context (e.g. `FetchHttpClient.layer`). */
  static readonly layer = (options: ClientOptions): Layer.Layer<AnimalStoreClient, never, HttpClient.HttpClient> =>
    Layer.effect(
      AnimalStoreClient,
      HttpApiClient.make(Api, {
        transformClient: HttpClient.mapRequest((request) =>
          request.pipe(
            HttpClientRequest.prependUrl(origin(options.baseUrl)),
            HttpClientRequest.bearerToken(
              typeof options.apiKey === "string" ? options.apiKey : Redacted.value(options.apiKey)
            )
          )
        )
      })
    )
}

