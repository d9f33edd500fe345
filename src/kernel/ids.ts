// Public identifiers: a type prefix and 24 random base62 characters (~143 bits), opaque to callers.
import { randomBytes } from 'node:crypto';

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

/** How many CSPRNG bytes are drawn at once: one call for about a hundred ids instead of one per id (each is a system call's worth of work). */
const RANDOM_POOL_BYTES = 4096;
let randomPool = Buffer.alloc(0);
let randomPoolOffset = 0;

/** The next byte from the CSPRNG, each byte used once. */
function randomByte(): number {
  if (randomPoolOffset === randomPool.length) {
    randomPool = randomBytes(RANDOM_POOL_BYTES);
    randomPoolOffset = 0;
  }
  return randomPool[randomPoolOffset++]!;
}

/** Uniform base62 text from a CSPRNG (rejection sampling keeps every character equally likely). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    const byte = randomByte();
    if (byte < 248) out += BASE62[byte % 62];
  }
  return out;
}

export function newId(kind: IdKind): string {
  return `${ID_PREFIXES[kind]}_${randomBase62(ID_RANDOM_LENGTH)}`;
}

const ID_PATTERN = /^[a-z]+_[0-9A-Za-z]{24}$/;

/** True when `value` has the shape of an id of `kind` (it may still not exist). */
export function isId(kind: IdKind, value: string): boolean {
  return ID_PATTERN.test(value) && value.startsWith(`${ID_PREFIXES[kind]}_`);
}
