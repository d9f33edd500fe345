// What this service reads of an error Prisma 7 throws: Prisma's code and message, and the cause the driver
// adapter (@prisma/adapter-pg) attaches: its kind, the SQLSTATE, and the unique index a write broke.
export interface PrismaErrorLike {
  code?: unknown;
  message?: unknown;
  meta?: { driverAdapterError?: { cause?: { kind?: unknown; originalCode?: unknown; constraint?: { index?: unknown } } } };
}
