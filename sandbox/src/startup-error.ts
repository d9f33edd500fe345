/** A failure at start-up that an operator can fix from its message alone: printed as one line, no stack. */
export class StartupError extends Error {}
