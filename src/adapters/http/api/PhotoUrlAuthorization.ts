import { HttpApiMiddleware, HttpApiSecurity } from "effect/http-api"
import { Forbidden, UnauthorizedResponse } from "./ApiErrors.ts"

/** The query parameters of a signed photo URL. */
export const SIGNATURE_PARAM = "signature"
export const EXPIRES_PARAM = "expires"

/**
 * What a photo rendition needs: a signed URL (the `expires` and `signature` its photo
 * record gave, which an `<img>` can carry and a bearer key cannot), or else a bearer key
 * of any scope. A signature that is wrong, of another path, or expired is 403, key or no key.
 */
export class PhotoUrlAuthorization extends HttpApiMiddleware.Service<PhotoUrlAuthorization>()(
  "animal-store/http/PhotoUrlAuthorization",
  {
    security: {
      bearerAuth: HttpApiSecurity.bearer,
      photoUrlSignature: HttpApiSecurity.apiKey({ in: "query", key: SIGNATURE_PARAM })
    },
    error: [UnauthorizedResponse, Forbidden]
  }
) {}
