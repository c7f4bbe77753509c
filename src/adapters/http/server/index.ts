/** The HTTP server layer: every route of the service, to serve or to mount in a host router. */
export * as HttpApp from "./HttpApp.ts"
