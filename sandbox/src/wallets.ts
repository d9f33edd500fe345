// The sandbox's wallets (a wallet and a pay-later provider) and what the customer's answer in the wallet's
// sheet does to the payment. As with TEST_CARDS, the server decides from these tables and the tests walk them.
import type { PaymentMethodType } from './processors.ts';
import { APPROVED, failed, type Outcome } from './outcomes.ts';

export const WALLETS = {
  sandbox_pay: { paymentMethodType: 'wallet', name: 'Sandbox Pay' },
  sandbox_later: { paymentMethodType: 'pay_later', name: 'Sandbox Later' },
} as const satisfies Record<string, { paymentMethodType: PaymentMethodType; name: string }>;

export type WalletType = keyof typeof WALLETS;

export const WALLET_TYPES = Object.keys(WALLETS) as [WalletType, ...WalletType[]];

/** The customer's answers in the sheet (the route `POST /sessions/{token}/<answer>`) and the payment each yields. */
export const WALLET_DECISIONS = {
  approve: APPROVED,
  decline: failed('wallet_declined', 'The customer declined the payment in the wallet.'),
} as const satisfies Record<string, Outcome>;

export type WalletDecision = keyof typeof WALLET_DECISIONS;

/** How long a session may be approved and its payment token used, as with a wallet's short-lived sheet. */
export const SESSION_TTL_MS = 60 * 60 * 1000;

export const isWalletDecision = (value: string): value is WalletDecision => Object.hasOwn(WALLET_DECISIONS, value);
