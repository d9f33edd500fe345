// The secret key goes in every request's header: over plain http it would cross the network readable by anyone
// on the path. Plain http is for a service on this machine only (docs/server-sdk.md, docs/cli.md "Security").

/** 127.0.0.0/8, [::1] and localhost: URL has already normalized the IPv4 forms (127.1 → 127.0.0.1). */
function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

/** Throws `TypeError` naming `option` unless `baseUrl` is https, or http to a loopback host. */
export function assertKeySafeBaseUrl(baseUrl: string, option: string): void {
  const url = URL.canParse(baseUrl) ? new URL(baseUrl) : undefined;
  if (url?.protocol === 'https:' || (url?.protocol === 'http:' && isLoopback(url.hostname))) return;
  throw new TypeError(`${option} must be https (or http to localhost, 127.0.0.0/8 or ::1): the secret key must not cross a network in clear text`);
}
