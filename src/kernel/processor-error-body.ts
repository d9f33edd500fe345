// A processor's error body, made fit to keep on a payment attempt and show to the merchant (docs/declines.md):
// whatever the processor sent (Stripe's error object, Adyen's refusal or HTTP error, the sandbox's error), without
// what could carry card data or secrets, with card numbers masked in its text, bounded in size, and storable as
// PostgreSQL JSONB. Connectors pass every body through here before it leaves them, so nothing else holds one raw.

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

declare const scrubbed: unique symbol;
/** A processor's error body after processorErrorBody: only that function makes one. */
export type ProcessorErrorBody = { readonly [key: string]: JsonValue } & { readonly [scrubbed]: true };

/** The most a kept body takes, serialised as UTF-8 JSON. */
export const MAX_BODY_BYTES = 8192;
/** How deep a body is kept: deeper objects and arrays are dropped (error bodies are shallow; nested resources are copies). */
const MAX_DEPTH = 6;
/** The most items kept of an array and entries of an object. */
const MAX_ITEMS = 50;
/** The most characters kept of a string or a key. */
const MAX_TEXT = 1000;

/**
 * Keys whose values are dropped, compared lowercased without "-", "_" or ".": card data (the number, CVC and the
 * checks named after it, expiry, the holder's name, track data, PIN blocks), Adyen's client-side encrypted fields,
 * bank account numbers, secrets and credentials, reusable tokens of a card, signatures, and the nested copy of the
 * payment method an error may carry (Stripe's `payment_method` and `source`: the card's details and the customer's
 * billing details, which the attempt keeps as it should already). A harmless field that matches (Stripe's
 * `cvc_check`, Adyen's `paymentMethod: "visa"`) is a small loss next to a leak.
 */
const FORBIDDEN_KEY =
  /^(number|pan|cardnumber|primaryaccountnumber|accountnumber|bankaccountnumber|iban|bban|pin|pinblock|track[12]?|trackdata|paymentmethod|source|billingdetails)$|cvc|cvv|cvn|securitycode|^exp($|iry|iration|month|year|date)|^encrypted|holdername|secret|password|apikey|token|signature|authorization|cookie|recurringdetailreference|storedpaymentmethodid/;

const isForbiddenKey = (key: string): boolean => key === '__proto__' || FORBIDDEN_KEY.test(key.toLowerCase().replace(/[-_.]/g, ''));

/** A run of 12 or more digits, single spaces or dashes allowed between them: a card number, however it is written. */
const DIGIT_RUN = /\d(?:[ -]?\d){11,}/;
const DIGIT_RUNS = new RegExp(DIGIT_RUN.source, 'g');
export const MASKED_NUMBER = '[number masked]';
/** Control characters but tab and line breaks: NUL, which JSONB refuses, and the rest, whose escapes would put digits beside the text's own. */
const CONTROL_CHARACTERS = /[^\P{Cc}\t\n\r]/gu;

const byteLength = (value: JsonValue): number => new TextEncoder().encode(JSON.stringify(value)).length;

/** `text` with every run of digits that could be a card number masked: for a processor's messages, which we show and log. */
export const maskCardNumbers = (text: string): string => text.replace(DIGIT_RUNS, MASKED_NUMBER);

/** Text as kept: at most MAX_TEXT characters of well-formed Unicode (JSONB refuses lone surrogates) without control characters, digit runs masked. */
function keptText(text: string): string {
  return maskCardNumbers(text.slice(0, MAX_TEXT).toWellFormed().replace(CONTROL_CHARACTERS, ''));
}

/** `value` as kept within `budget` bytes of JSON, or undefined when it cannot be (then its entry is dropped). */
function kept(value: unknown, depth: number, budget: number): JsonValue | undefined {
  const within = (json: JsonValue) => (byteLength(json) <= budget ? json : undefined);
  if (value === null || typeof value === 'boolean') return within(value);
  if (typeof value === 'string') return within(keptText(value));
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return undefined;
    // A card number sent as a JSON number, or any number whose digits read as one.
    return within(DIGIT_RUN.test(String(value)) ? MASKED_NUMBER : value);
  }
  // Too deep, or no room left for even its brackets.
  if (typeof value !== 'object' || depth >= MAX_DEPTH || budget < 2) return undefined;
  const entries: [string | null, unknown][] = Array.isArray(value)
    ? value.slice(0, MAX_ITEMS).map((item: unknown) => [null, item])
    : Object.entries(value as object)
        .filter(([key]) => !isForbiddenKey(key))
        .slice(0, MAX_ITEMS);
  const items: JsonValue[] = [];
  const fields: Record<string, JsonValue> = {};
  // The brackets, then each entry with its key, colon and comma.
  let used = 2;
  for (const [key, inner] of entries) {
    const keyText = key === null ? null : keptText(key);
    const overhead = (keyText === null ? 0 : byteLength(keyText) + 1) + (used > 2 ? 1 : 0);
    const child = kept(inner, depth + 1, budget - used - overhead);
    if (child === undefined) continue;
    if (keyText === null) items.push(child);
    else if (isForbiddenKey(keyText)) continue;
    else fields[keyText] = child;
    used += overhead + byteLength(child);
  }
  return Array.isArray(value) ? items : fields;
}

/**
 * The body as kept, or null when there is none (no body, or one that was not JSON). A body that is not an object
 * is kept as `{ "body": … }`, as a JSONB column here holds objects. Pure and total: it never throws.
 */
export function processorErrorBody(body: unknown): ProcessorErrorBody | null {
  if (body === undefined || body === null) return null;
  const object = typeof body === 'object' && !Array.isArray(body) ? body : { body };
  return (kept(object, 0, MAX_BODY_BYTES) ?? null) as ProcessorErrorBody | null;
}
