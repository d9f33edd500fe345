// Countries as ISO 3166-1 alpha-2 codes. The list of regions comes from the ICU data Node ships with
// (Intl.DisplayNames) rather than a hand-kept table; codes it does not name, and "ZZ" (unknown), are refused.
const regionNames = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'code' });

export function isCountry(code: string): boolean {
  return /^[A-Z]{2}$/.test(code) && code !== 'ZZ' && regionNames.of(code) !== code;
}
