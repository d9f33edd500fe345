import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StartupError } from '../startup-error.ts';

/** Listens and resolves with the port; a taken port is a one-line start-up error. */
export function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) =>
      reject(error.code === 'EADDRINUSE' ? new StartupError(`port ${port} is already in use; stop the other process or choose another port`) : error);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** The address a client on this machine uses for a server bound to `host`. */
export function reachableHost(host: string): string {
  if (host === '0.0.0.0' || host === '::') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host; // an IPv6 literal needs brackets in a URL
}
