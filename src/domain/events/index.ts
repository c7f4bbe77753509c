export * from "./EventId.ts"
export * from "./EventType.ts"
export * from "./StoreEvent.ts"
export * from "./EventData.ts"
