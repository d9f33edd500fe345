// A TCP proxy on 127.0.0.1 in front of a local port, for tests of what a client does when its connection goes
// silent (silence: open, but nothing passes) or drops (cut: every open connection closed, new ones still taken;
// refuse: new ones closed at once too, until refuse(false)), or holds a client's request (holdFrom: what the
// client sends from the nth chunk matching a pattern is kept back until release()).
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export async function tcpProxy(port: number) {
  let silent = false;
  let refusing = false;
  let hold: { pattern: RegExp; toPass: number; reached: () => void; held: (() => void)[] | undefined } | undefined;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    if (refusing) return void client.destroy();
    const upstream = connect(port, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => sockets.delete(socket));
    }
    client.on('data', (chunk: Buffer) => {
      if (hold && !hold.held && hold.pattern.test(chunk.toString('latin1')) && hold.toPass-- === 0) {
        hold.held = [];
        hold.reached();
      }
      if (hold?.held) hold.held.push(() => upstream.write(chunk));
      else if (!silent) upstream.write(chunk);
    });
    upstream.on('data', (chunk) => silent || client.write(chunk));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const cut = () => {
    for (const socket of sockets) socket.destroy();
  };
  return {
    port: (server.address() as AddressInfo).port,
    silence: () => (silent = true),
    /** Passes things on again (what it dropped while silent stays dropped: cut the connections to recover). */
    speak: () => (silent = false),
    refuse: (refuse: boolean) => (refusing = refuse),
    /** Holds what clients send from the `nth` chunk matching `pattern` (1 is the first); `reached` resolves then. */
    holdFrom(pattern: RegExp, nth = 1) {
      const reached = new Promise<void>((resolve) => (hold = { pattern, toPass: nth - 1, reached: resolve, held: undefined }));
      return {
        reached,
        release: () => {
          const held = hold?.held ?? [];
          hold = undefined;
          for (const write of held) write();
        },
      };
    },
    cut,
    close: async () => {
      cut();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
