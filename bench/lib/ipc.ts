// The child's side of `Child.request`: answers one message type over the IPC channel, with the same id.
export function answer<M extends Record<string, unknown>>(type: string, handler: (message: M) => unknown): void {
  process.on('message', (message: M & { id: number; type: string }) => {
    if (message?.type !== type) return;
    Promise.resolve()
      .then(() => handler(message))
      .then(
        (result) => process.send?.({ id: message.id, ...(result as object | undefined) }),
        (error: unknown) => process.send?.({ id: message.id, error: (error as Error).message }),
      );
  });
}
