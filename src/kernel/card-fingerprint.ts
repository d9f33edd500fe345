// The keyed fingerprint of a card number (server only: it needs the service's key and Node's crypto).
import { createHmac } from 'node:crypto';
import { normaliseCardNumber } from './cards.ts';

/**
 * A keyed hash of the card number: the same card gives the same fingerprint under one key (to spot a card used
 * again) while the number itself is never stored, and without the key the fingerprint cannot be brute-forced
 * from the small space of valid card numbers.
 */
export function cardFingerprint(number: string, key: Buffer): string {
  return createHmac('sha256', key).update(normaliseCardNumber(number)).digest('hex');
}
