// Issuing, revoking and recognising API keys. A key is shown once, when issued; only its hash is stored.
import { digestsEqual, generateApiKey, hashApiKey, parseApiKey, redactApiKey, secretDigest, type KeyType, type Mode } from '../../kernel/api-keys.ts';
import { AppError, notFound } from '../../kernel/errors.ts';
import { isId, newId } from '../../kernel/ids.ts';
import type { ApiKey, Prisma } from '../../generated/prisma/client.ts';
import type { ServiceContext } from '../../platform/context.ts';
import type { Principal } from '../../kernel/principal.ts';
import { parseInput } from '../../kernel/validation.ts';
import { createApiKeyInput, rotateApiKeyInput } from './inputs.ts';

type Transaction = Prisma.TransactionClient;

/** The request header (or graphql-ws connection parameter) a platform names the connected merchant it acts for with. */
export const CONNECTED_MERCHANT_HEADER = 'X-Connected-Merchant-Id';

/** The keys that still work at `now`: neither revoked nor expired. */
export function usableKeyWhere(now: Date): Prisma.ApiKeyWhereInput {
  return { revokedAt: null, OR: [{ expiresAt: null }, { expiresAt: { gt: now } }] };
}

/** The read cache's tag of an API key's row: invalidated whenever the row changes. */
export const apiKeyTag = (keyId: string) => `apiKey:${keyId}`;

export interface IssuedKey {
  apiKey: ApiKey;
  /** The key itself: returned to the caller once and never again. */
  key: string;
}

/** Inserts a new key inside the caller's transaction (so a merchant and its first keys commit together). */
export async function issueApiKey(
  tx: Transaction,
  merchantId: string,
  type: KeyType,
  mode: Mode,
  name: string,
  expiresAt: Date | null = null,
): Promise<IssuedKey> {
  const key = generateApiKey(type, mode);
  const apiKey = await tx.apiKey.create({
    data: {
      id: newId('apiKey'),
      merchantId,
      name,
      type,
      mode,
      keyHash: hashApiKey(key),
      redacted: redactApiKey(key),
      publishableKey: type === 'PUBLISHABLE' ? key : null,
      expiresAt,
    },
  });
  return { apiKey, key };
}

export class ApiKeyService {
  /** ADMIN_API_KEY's digest, taken once: each request's key is hashed once, for the comparison with it and the lookup. */
  readonly #adminKeyDigest: Buffer | undefined;

  constructor(private readonly context: ServiceContext) {
    const adminKey = context.config.ADMIN_API_KEY;
    this.#adminKeyDigest = adminKey === undefined ? undefined : secretDigest(adminKey);
  }

  /** Resolves the presented key (or none) to a principal; an unknown or revoked key is refused, never treated as anonymous. */
  async authenticate(presented: string | null): Promise<Principal> {
    if (presented === null) return { kind: 'anonymous' };
    // One digest of the presented key: compared with the admin key's as secretsEqual compares, and looked up by its hex.
    const digest = secretDigest(presented);
    if (this.#adminKeyDigest !== undefined && digestsEqual(digest, this.#adminKeyDigest)) return { kind: 'admin' };
    if (parseApiKey(presented) === null) throw new AppError('UNAUTHENTICATED', 'The API key is not a valid key.');
    const row = await this.keyByHash(digest.toString('hex'));
    if (row === null) throw new AppError('UNAUTHENTICATED', 'The API key is not a valid key.');
    if (row.revokedAt !== null) throw new AppError('UNAUTHENTICATED', `The API key ${row.redacted} was revoked.`);
    if (row.expiresAt !== null && row.expiresAt.getTime() <= Date.now()) {
      throw new AppError('UNAUTHENTICATED', `The API key ${row.redacted} expired at ${row.expiresAt.toISOString()}.`);
    }
    const kind = row.type === 'SECRET' ? 'secretKey' : 'publishableKey';
    return { kind, merchantId: row.merchantId, mode: row.mode, keyId: row.id };
  }

  /**
   * The key's row, from the read cache: revocation, rotation and expiry are judged on it at each use, against the
   * clock. An unknown key is not cached, so a key issued a moment ago is never refused (docs/architecture.md, "Read cache").
   */
  private keyByHash(keyHash: string): Promise<ApiKey | null> {
    return this.context.cache.read(`apiKey:${keyHash}`, async () => {
      const row = await this.context.db.apiKey.findUnique({ where: { keyHash } });
      return { value: row, tags: row === null ? null : [apiKeyTag(row.id)] };
    });
  }

  /**
   * The principal a request runs as when it names a connected merchant (`X-Connected-Merchant-Id`, docs/platforms.md):
   * that merchant, in the key's mode, with the platform's key and id. Only a platform's secret key may send the
   * header, and only for a merchant connected to that platform; anything else is refused before any work, with one
   * answer whether the merchant is unknown, another platform's or a sibling (no way to learn which merchants exist).
   */
  async actingFor(principal: Principal, connectedMerchantId: string | null): Promise<Principal> {
    if (connectedMerchantId === null) return principal;
    if (principal.kind !== 'secretKey') {
      throw new AppError('FORBIDDEN', `${CONNECTED_MERCHANT_HEADER}: only a platform's secret key may act for a connected merchant.`, {
        field: CONNECTED_MERCHANT_HEADER,
      });
    }
    const platformId = principal.merchantId;
    // Cached when connected only: a merchant's platform and whether it is one are set when it is created, never changed.
    const connected = isId('merchant', connectedMerchantId)
      ? await this.context.cache.read(`connected:${platformId}:${connectedMerchantId}`, async () => {
          const row = await this.context.db.merchantAccount.findFirst({
            where: { id: connectedMerchantId, platformMerchantId: platformId, platform: { isPlatform: true } },
            select: { id: true },
          });
          return { value: row, tags: row === null ? null : [] };
        })
      : null;
    if (connected === null) {
      throw new AppError(
        'FORBIDDEN',
        `${CONNECTED_MERCHANT_HEADER}: "${connectedMerchantId.slice(0, 64)}" is not a merchant connected to the platform of this key.`,
        {
          field: CONNECTED_MERCHANT_HEADER,
        },
      );
    }
    return { ...principal, merchantId: connected.id, platformMerchantId: principal.merchantId };
  }

  /** Which of `keyIds` may no longer be used (revoked, expired, or gone): their running subscriptions end. */
  async unusable(keyIds: readonly string[]): Promise<Set<string>> {
    if (keyIds.length === 0) return new Set();
    const usable = await this.context.db.apiKey.findMany({
      where: { id: { in: [...keyIds] }, ...usableKeyWhere(new Date()) },
      select: { id: true },
    });
    const active = new Set(usable.map((row) => row.id));
    return new Set(keyIds.filter((id) => !active.has(id)));
  }

  /** A secret key issues keys for its own merchant and mode; the admin key issues any, live ones included. */
  async create(principal: Principal, rawInput: unknown): Promise<IssuedKey> {
    const input = parseInput(createApiKeyInput, rawInput);
    let merchantId: string;
    let mode: Mode;
    if (principal.kind === 'admin') {
      if (!input.merchantId) throw new AppError('INVALID_INPUT', 'merchantId: required with the admin key', { field: 'merchantId' });
      merchantId = input.merchantId;
      mode = input.mode ?? 'TEST';
      const merchant = await this.context.db.merchantAccount.findUnique({ where: { id: merchantId }, select: { id: true } });
      if (merchant === null) throw notFound('merchant account', merchantId);
    } else if (principal.kind === 'secretKey') {
      if (input.merchantId && input.merchantId !== principal.merchantId) throw notFound('merchant account', input.merchantId);
      if (input.mode && input.mode !== principal.mode) {
        throw new AppError('FORBIDDEN', `A ${principal.mode.toLowerCase()} key can only issue ${principal.mode.toLowerCase()} keys.`);
      }
      merchantId = principal.merchantId;
      mode = principal.mode;
    } else {
      throw new AppError('FORBIDDEN', 'Issuing keys needs a secret API key or the admin key.');
    }
    return this.context.db.$transaction((tx) => issueApiKey(tx, merchantId, input.type, mode, input.name, input.expiresAt ?? null));
  }

  async revoke(principal: Principal, keyId: string): Promise<ApiKey> {
    const row = await this.manageable(principal, keyId);
    // Invalidated even when already revoked: a row revoked outside the service may still be cached.
    const revoked = row.revokedAt !== null ? row : await this.context.db.apiKey.update({ where: { id: keyId }, data: { revokedAt: new Date() } });
    await this.context.cache.invalidate([apiKeyTag(keyId)]);
    return revoked;
  }

  /**
   * Issues a successor of the key (same merchant, type, mode and name) and lets the old one work for
   * `expiresInSeconds` more (0 revokes it now), never longer than it already would. One transaction; a key
   * already revoked or expired is refused (concurrent rotations of a usable key each issue a successor).
   */
  async rotate(principal: Principal, rawInput: unknown): Promise<IssuedKey & { previous: ApiKey }> {
    const input = parseInput(rotateApiKeyInput, rawInput);
    const old = await this.manageable(principal, input.keyId);
    const now = new Date();
    const oldExpiresAt = new Date(now.getTime() + input.expiresInSeconds * 1000);
    const rotated = await this.context.db.$transaction(async (tx) => {
      const cut = await tx.apiKey.updateMany({
        where: { id: old.id, revokedAt: null, OR: [{ expiresAt: null }, { expiresAt: { gt: oldExpiresAt } }] },
        data: { expiresAt: oldExpiresAt, ...(input.expiresInSeconds === 0 ? { revokedAt: now } : {}) },
      });
      if (cut.count === 0) {
        // Either unusable already, or set to expire sooner than asked (kept: a rotation never extends a key's life).
        const current = await tx.apiKey.findUniqueOrThrow({ where: { id: old.id } });
        if (current.revokedAt !== null || (current.expiresAt !== null && current.expiresAt <= now)) {
          throw new AppError('INVALID_STATE', `The API key ${old.redacted} is already revoked or expired; issue a new key with createApiKey.`);
        }
      }
      const issued = await issueApiKey(tx, old.merchantId, old.type, old.mode, old.name);
      return { ...issued, previous: await tx.apiKey.findUniqueOrThrow({ where: { id: old.id } }) };
    });
    await this.context.cache.invalidate([apiKeyTag(old.id)]);
    return rotated;
  }

  /** The key `keyId` if the principal may revoke or rotate it: a secret key's own merchant's of its mode, or any for the admin key. */
  private async manageable(principal: Principal, keyId: string): Promise<ApiKey> {
    const row = await this.context.db.apiKey.findUnique({ where: { id: keyId } });
    const visible = row !== null && (principal.kind === 'admin' || (principal.kind === 'secretKey' && principal.merchantId === row.merchantId));
    if (!visible) throw notFound('API key', keyId);
    if (principal.kind === 'secretKey' && row.mode !== principal.mode) {
      throw new AppError('NOT_FOUND', `No API key with id "${keyId}" exists in ${principal.mode.toLowerCase()} mode; it is a ${row.mode.toLowerCase()} key.`);
    }
    return row;
  }
}
