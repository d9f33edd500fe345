// Public identifiers: a type prefix and 24 random base62 characters (~143 bits), opaque to callers.
import { randomBytes } from 'node:crypto';
import { publicRandomByte } from './public-random.ts';

export const ID_PREFIXES = {
  merchant: 'mer',
  businessProfile: 'pro',
  apiKey: 'key',
  connectorAccount: 'mca',
  customer: 'cus',
  paymentMethod: 'pm',
  payment: 'pay',
  attempt: 'att',
  refund: 'ref',
  dispute: 'dis',
  mandate: 'man',
  payout: 'po',
  event: 'evt',
  deliveryAttempt: 'dlv',
  connectorCallback: 'cbk',
  paymentLink: 'plink',
  subscription: 'sub',
  routingAlgorithm: 'rta',
  ledgerEntry: 'le',
  ledgerTransaction: 'ltx',
  dashboardUser: 'usr',
  dashboardSession: 'ses',
  dashboardInvitation: 'inv',
  auditLogEntry: 'aud',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

/** How many random characters follow an id's prefix. */
export const ID_RANDOM_LENGTH = 24;

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Uniform base62 text of `length` from `nextByte` (rejection sampling keeps every character equally likely). */
function base62Of(length: number, nextByte: () => number): string {
  let out = '';
  while (out.length < length) {
    const byte = nextByte();
    if (byte < 248) out += BASE62[byte % 62];
  }
  return out;
}

/** Random base62 text for public identifiers, from the pooled CSPRNG bytes (public-random.ts). */
export function randomBase62(length: number): string {
  return base62Of(length, publicRandomByte);
}

/**
 * Random base62 text for a secret (an API key): its own CSPRNG draw, wiped once used, so no upcoming secret
 * sits in memory (or in a heap snapshot) before it is issued.
 */
export function secretBase62(length: number): string {
  // 248 of 256 byte values are kept, so twice the length is about always enough; when not, another draw follows.
  let bytes = Buffer.alloc(0);
  let offset = 0;
  try {
    return base62Of(length, () => {
      if (offset === bytes.length) {
        bytes.fill(0);
        bytes = randomBytes(length * 2);
        offset = 0;
      }
      return bytes[offset++]!;
    });
  } finally {
    bytes.fill(0);
  }
}

export function newId(kind: IdKind): string {
  return `${ID_PREFIXES[kind]}_${randomBase62(ID_RANDOM_LENGTH)}`;
}

const ID_PATTERN = /^[a-z]+_[0-9A-Za-z]{24}$/;

/** True when `value` has the shape of an id of `kind` (it may still not exist). */
export function isId(kind: IdKind, value: string): boolean {
  return ID_PATTERN.test(value) && value.startsWith(`${ID_PREFIXES[kind]}_`);
}
