// IBANs (ISO 13616): the country, two check digits and the account, checked by mod 97 as banks do.

/** Upper case without spaces, as IBANs are compared and sent. */
export function normaliseIban(iban: string): string {
  return iban.replace(/\s+/g, '').toUpperCase();
}

/** Why `iban` is not a valid IBAN, or null. */
export function ibanProblem(iban: string): string | null {
  const compact = normaliseIban(iban);
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/.test(compact)) return 'must be an IBAN: 2 letters, 2 check digits and 11 to 30 letters or digits';
  // Move the first four characters to the end, letters become 10..35, and the number mod 97 must be 1.
  const rearranged = compact.slice(4) + compact.slice(0, 4);
  let remainder = 0;
  for (const char of rearranged) {
    const value = char >= 'A' ? char.charCodeAt(0) - 55 : Number(char);
    remainder = (remainder * (value > 9 ? 100 : 10) + value) % 97;
  }
  return remainder === 1 ? null : 'is not a valid IBAN (the check digits do not match)';
}

/** The last four characters: what may be shown and stored of an account. */
export const ibanLast4 = (iban: string): string => normaliseIban(iban).slice(-4);
