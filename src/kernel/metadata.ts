// Merchant metadata on payments: free-form string pairs, held to Stripe's limits so it can be passed on unchanged.
// Lengths are counted in UTF-16 code units (JavaScript's length), never fewer than characters, so nothing accepted
// here is too long for a processor that counts characters.

export const MAX_METADATA_KEYS = 50;
export const MAX_METADATA_KEY_LENGTH = 40;
export const MAX_METADATA_VALUE_LENGTH = 500;

/** The first rule the metadata breaks, with field "metadata" or "metadata.<key>", or null when it is acceptable. */
export function metadataProblem(value: unknown): { field: string; message: string } | null {
  if (!isPlainObject(value)) return { field: 'metadata', message: 'must be a JSON object of string values' };
  const entries = Object.entries(value);
  if (entries.length > MAX_METADATA_KEYS) return { field: 'metadata', message: `must have at most ${MAX_METADATA_KEYS} keys` };
  for (const [key, entry] of entries) {
    const field = `metadata.${key}`;
    if (key.length < 1 || key.length > MAX_METADATA_KEY_LENGTH) {
      return { field, message: `keys must be 1 to ${MAX_METADATA_KEY_LENGTH} characters` };
    }
    // Stripe's form encoding uses brackets for nesting ("metadata[key]"), so a key cannot contain them.
    if (key.includes('[') || key.includes(']')) return { field, message: "keys must not contain '[' or ']'" };
    // A JavaScript object (ours, or a receiver's merging a webhook's metadata) takes "__proto__" as its
    // prototype, not as a key: it would be dropped here, or pollute there.
    if (key === '__proto__') return { field, message: 'keys must not be __proto__ (reserved in JavaScript objects)' };
    if (typeof entry !== 'string') return { field, message: 'must be a string' };
    if (entry.length > MAX_METADATA_VALUE_LENGTH) return { field, message: `must be at most ${MAX_METADATA_VALUE_LENGTH} characters` };
  }
  return null;
}

// What JSON.parse makes of a JSON object: not null, nor an array or other instance of a class (Date, Map, ...).
function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}
