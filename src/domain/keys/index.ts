export * from "./Caller.ts"
export * from "./KeyScope.ts"
