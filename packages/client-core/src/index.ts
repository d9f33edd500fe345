export * from './errors.ts';
export * from './transport.ts';
export * from './retries.ts';
