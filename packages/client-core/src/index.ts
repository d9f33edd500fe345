export * from './errors.ts';
export * from './transport.ts';
