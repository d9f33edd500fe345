// The conventions every resource's webhook wire shape (`content.object`) follows, each module's wire.ts
// writing its own: snake_case, statuses as snake_case strings, amounts in minor units, instants in ISO 8601.
// Every shape carries `updated` so receivers apply only a newer state (the seed's receiver obligations), and
// `version`, which orders changes of the same instant.

/** When a resource was created and last changed, and the version that orders its changes: every wire shape ends with them. */
export function changeFields(resource: { createdAt: Date; updatedAt: Date; version: number }) {
  return { created: resource.createdAt.toISOString(), updated: resource.updatedAt.toISOString(), version: resource.version };
}

/** Who a resource belongs to, as every wire shape carries it. */
export function ownerFields(resource: { merchantId: string; profileId: string; mode: string }) {
  return { merchant_id: resource.merchantId, profile_id: resource.profileId, livemode: resource.mode === 'LIVE' };
}
