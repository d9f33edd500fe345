// Payment links: a reusable URL a merchant shares for an amount (or an amount the customer chooses within
// bounds) until it expires. Each use creates its own payment, tagged with the link, which the customer then
// pays in the hosted checkout with its client secret and the merchant's publishable key, like any SDK payment.
import { AppError, invalidInput, notFound } from '../../kernel/errors.ts';
import { isId, newId } from '../../kernel/ids.ts';
import type { PaymentLink } from '../../generated/prisma/client.ts';
import { profileFor, usableKeyWhere } from '../merchants/index.ts';
import type { ServiceContext } from '../../platform/context.ts';
import type { PaymentService } from '../payments/index.ts';
import type { Principal, SecretKeyPrincipal } from '../../kernel/principal.ts';
import type { RateLimits } from '../../platform/rate-limits.ts';
import type { Payment } from '../payments/index.ts';
import { parseInput } from '../../kernel/validation.ts';
import { createPaymentLinkInput, payInput } from './inputs.ts';

const DEFAULT_EXPIRY_SECONDS = 24 * 60 * 60;

export class PaymentLinkService {
  constructor(
    private readonly context: ServiceContext,
    private readonly payments: PaymentService,
  ) {}

  /**
   * A customer's confirm (a publishable key with the client secret): at most so many per client secret, and
   * none for a payment link whose payments were declined too often; each decline counts against its link, so
   * a link cannot serve as a card-testing oracle.
   */
  async confirmWithinLimits(limits: RateLimits, principal: Principal, input: { clientSecret: string }): Promise<Payment> {
    // Widened, not narrowed to null: it is set in the callback below.
    let linkId = null as string | null;
    try {
      return await this.payments.confirm(principal, input, {
        count: (paymentId) => limits.consume('confirmsPerClientSecret', paymentId),
        // Checked on the payment confirm reads anyway, before it does anything: no read of its own for the link.
        admit: async (payment) => {
          linkId = payment.paymentLinkId;
          if (linkId !== null) await limits.refuseIfReached('declinesPerLink', linkId);
        },
      });
    } catch (error) {
      if (linkId !== null && error instanceof AppError && error.code === 'PAYMENT_DECLINED') await limits.count('declinesPerLink', linkId);
      throw error;
    }
  }

  /** Where customers open the link. */
  urlOf(link: Pick<PaymentLink, 'id'>): string {
    return `${this.context.publicUrl.replace(/\/$/, '')}/payment-links/${link.id}`;
  }

  async create(principal: SecretKeyPrincipal, rawInput: unknown): Promise<PaymentLink> {
    const input = parseInput(createPaymentLinkInput, rawInput);
    const { db } = this.context;
    const profile = await profileFor(this.context, principal.merchantId, input.profileId);
    const now = new Date();
    return db.paymentLink.create({
      data: {
        id: newId('paymentLink'),
        merchantId: principal.merchantId,
        profileId: profile.id,
        mode: principal.mode,
        currency: input.currency,
        amount: input.amount ?? null,
        minAmount: input.minAmount ?? null,
        maxAmount: input.maxAmount ?? null,
        description: input.description ?? null,
        expiresAt: new Date(now.getTime() + (input.expiresInSeconds ?? DEFAULT_EXPIRY_SECONDS) * 1000),
        createdAt: now,
      },
    });
  }

  async get(principal: SecretKeyPrincipal, linkId: string): Promise<PaymentLink> {
    const link = await this.find(linkId);
    if (link === null || link.merchantId !== principal.merchantId || link.mode !== principal.mode) throw notFound('payment link', linkId);
    return link;
  }

  /** Takes no more uses from now on (payments already made through it are unchanged); deactivating again changes nothing. */
  async deactivate(principal: SecretKeyPrincipal, linkId: string): Promise<PaymentLink> {
    const link = await this.get(principal, linkId);
    if (link.deactivatedAt !== null) return link;
    return this.context.db.paymentLink.update({ where: { id: link.id }, data: { deactivatedAt: new Date() } });
  }

  /**
   * The link as anyone with its URL sees it: NOT_FOUND when unknown, INVALID_STATE (INACTIVE) once
   * deactivated, INVALID_STATE (EXPIRED) once expired.
   */
  async open(linkId: string): Promise<PaymentLink> {
    const link = await this.find(linkId);
    if (link === null) throw notFound('payment link', linkId);
    if (link.deactivatedAt !== null)
      throw new AppError('INVALID_STATE', 'This payment link is no longer active: the merchant deactivated it.', { status: 'INACTIVE' });
    if (link.expiresAt.getTime() <= Date.now())
      throw new AppError('INVALID_STATE', `This payment link expired at ${link.expiresAt.toISOString()}.`, { status: 'EXPIRED' });
    return link;
  }

  /** One use of the link (public): a new payment for its amount, or the customer's within its bounds. */
  async pay(linkId: string, rawInput: unknown): Promise<{ paymentId: string; clientSecret: string; publishableKey: string; amount: number; currency: string }> {
    const link = await this.open(linkId);
    const input = parseInput(payInput, rawInput);
    const publishableKey = await this.publishableKeyOf(link);
    const amount = link.amount ?? input.amount;
    if (link.amount === null) {
      if (amount == null || amount < link.minAmount! || amount > link.maxAmount!)
        throw invalidInput('amount', `must be from ${link.minAmount} to ${link.maxAmount}`);
    } else if (input.amount != null && input.amount !== link.amount) {
      throw invalidInput('amount', `this link is for ${link.amount}; leave amount out`);
    }
    // The link acts for its merchant; the history names the link.
    const principal: SecretKeyPrincipal = { kind: 'secretKey', merchantId: link.merchantId, mode: link.mode, keyId: `payment_link:${link.id}` };
    // After 3D Secure the customer comes back to the link's page, which shows the payment's status.
    const payment = await this.payments.create(
      principal,
      {
        amount,
        currency: link.currency,
        profileId: link.profileId,
        returnUrl: this.urlOf(link),
        ...(link.description ? { description: link.description } : {}),
      },
      { paymentLinkId: link.id },
    );
    return {
      paymentId: payment.id,
      clientSecret: this.payments.clientSecretFor(payment.id),
      publishableKey,
      amount: payment.amount,
      currency: payment.currency,
    };
  }

  /** The merchant's newest usable publishable key of the link's mode: the checkout needs one, checked before anything is written. */
  private async publishableKeyOf(link: PaymentLink): Promise<string> {
    const key = await this.context.db.apiKey.findFirst({
      where: { merchantId: link.merchantId, mode: link.mode, type: 'PUBLISHABLE', publishableKey: { not: null }, ...usableKeyWhere(new Date()) },
      orderBy: { createdAt: 'desc' },
      select: { publishableKey: true },
    });
    if (!key?.publishableKey) {
      throw new AppError('INVALID_STATE', 'The merchant has no publishable key for the checkout; it must issue one (createApiKey, type PUBLISHABLE).', {
        status: 'NO_PUBLISHABLE_KEY',
      });
    }
    return key.publishableKey;
  }

  /** The payments made through a link, newest first. */
  paymentsOf(linkId: string) {
    return this.context.db.paymentIntent.findMany({ where: { paymentLinkId: linkId }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: 100 });
  }

  private find(linkId: string): Promise<PaymentLink | null> {
    return isId('paymentLink', linkId) ? this.context.db.paymentLink.findUnique({ where: { id: linkId } }) : Promise.resolve(null);
  }
}
