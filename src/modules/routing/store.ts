// The only writer of routing_algorithms: a profile's active routing algorithm per mode, and the ones it replaced.
import { newId } from '../../kernel/ids.ts';
import type { Mode } from '../../kernel/api-keys.ts';
import { AppError } from '../../kernel/errors.ts';
import { isUniqueViolation } from '../../platform/db/unique-violation.ts';
import type { Database } from '../../platform/db/client.ts';
import type { Prisma, RoutingAlgorithm as RoutingAlgorithmRow } from '../../generated/prisma/client.ts';
import type { RoutingAlgorithm } from './algorithm.ts';

export type StoredAlgorithm = Omit<RoutingAlgorithmRow, 'algorithm'> & { algorithm: RoutingAlgorithm };

/** The row with its algorithm typed: written only by setActive, after the service's validation. */
const stored = (row: RoutingAlgorithmRow): StoredAlgorithm => ({ ...row, algorithm: row.algorithm as unknown as RoutingAlgorithm });

export class RoutingAlgorithmStore {
  constructor(private readonly db: Database) {}

  async active(profileId: string, mode: Mode): Promise<StoredAlgorithm | null> {
    const row = await this.db.routingAlgorithm.findFirst({ where: { profileId, mode, supersededAt: null } });
    return row && stored(row);
  }

  /** The algorithms the active one replaced, newest first. */
  async history(profileId: string, mode: Mode, limit: number): Promise<StoredAlgorithm[]> {
    const rows = await this.db.routingAlgorithm.findMany({
      where: { profileId, mode, supersededAt: { not: null } },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: limit,
    });
    return rows.map(stored);
  }

  /** Makes `algorithm` the active one of the profile's mode; the one it replaces joins the history, in one transaction. */
  async setActive(profileId: string, mode: Mode, algorithm: RoutingAlgorithm, createdBy: string): Promise<StoredAlgorithm> {
    const now = new Date();
    try {
      const row = await this.db.$transaction(async (tx) => {
        await tx.routingAlgorithm.updateMany({ where: { profileId, mode, supersededAt: null }, data: { supersededAt: now } });
        return tx.routingAlgorithm.create({
          data: { id: newId('routingAlgorithm'), profileId, mode, algorithm: algorithm as unknown as Prisma.InputJsonValue, createdBy, createdAt: now },
        });
      });
      return stored(row);
    } catch (error) {
      // Another call set one at the same moment (one active per profile and mode, a unique index).
      if (isUniqueViolation(error, 'routing_algorithms_active_key'))
        throw new AppError('CONFLICT', 'Another routing algorithm was set for this profile at the same moment; retry.');
      throw error;
    }
  }
}
