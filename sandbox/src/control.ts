// Steering a processor for tests and demos (`/_control`, docs/sandbox.md "Steering the sandbox"): a seeded share
// of the card payments it would approve at once declined with a soft decline, or an outage that answers 503 to
// every API request. The state is per processor, in this process's memory; `/_control` itself always answers.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { z } from 'zod';
import { failed } from './outcomes.ts';
import { ApiError, header, parseInput, readJson, type JsonReply } from './requests.ts';

/** The seed of a POST that sends none: the same control body always gives the same declines. */
export const DEFAULT_CONTROL_SEED = 1;

/**
 * The steered decline: `issuer_unavailable` is a soft decline in the product's catalog (docs/declines.md), so it
 * is retried on another processor, and it is no test card's code, so a steered decline is told from the
 * processing-error test card's (`processing_error`, which stands for the processor failing, as an outage does).
 */
export const STEERED_DECLINE = failed('issuer_unavailable', "The card's issuer could not be reached. Try again.", true);

/** The outage's answer to every API request of the processor. */
const OUTAGE = new ApiError(503, 'service_unavailable', 'The processor is unavailable (an outage set with /_control). Try again later.');

/** mulberry32: a small 32-bit PRNG, enough to spread declines evenly and repeat them exactly from a seed. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = Math.imul(state ^ (state >>> 15), 1 | state);
    mixed = (mixed + Math.imul(mixed ^ (mixed >>> 7), 61 | mixed)) ^ mixed;
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4294967296;
  };
}

/** One processor's steering: what a GET or POST of `/_control` answers, and what its payments consult. */
export class ProcessorControl {
  private declineRate = 0;
  private outage = false;
  private seed = DEFAULT_CONTROL_SEED;
  private random = seededRandom(DEFAULT_CONTROL_SEED);

  constructor(readonly processor: string) {}

  /** Sets what `changes` sends (the rest stays) and restarts the draws from its seed (DEFAULT_CONTROL_SEED without one). */
  set(changes: { declineRate?: number | undefined; outage?: boolean | undefined; seed?: number | undefined }): void {
    this.declineRate = changes.declineRate ?? this.declineRate;
    this.outage = changes.outage ?? this.outage;
    this.seed = changes.seed ?? DEFAULT_CONTROL_SEED;
    this.random = seededRandom(this.seed);
  }

  state() {
    return { processor: this.processor, declineRate: this.declineRate, outage: this.outage, seed: this.seed };
  }

  /** Refuses an API request during an outage. */
  requireAvailable(): void {
    if (this.outage) throw OUTAGE;
  }

  /** Whether a card payment the processor would approve at once is declined instead: one draw per such payment. */
  declinesNext(): boolean {
    return this.declineRate > 0 && this.random() < this.declineRate;
  }
}

const processorField = (names: readonly string[]) =>
  z.enum(names as [string, ...string[]], { error: (issue) => (issue.input === undefined ? 'is required' : `must be one of ${names.join(', ')}`) });

const controlSchema = (names: readonly string[]) =>
  z.strictObject({
    processor: processorField(names),
    declineRate: z.number().min(0, 'must be from 0 to 1').max(1, 'must be from 0 to 1').optional(),
    outage: z.boolean().optional(),
    seed: z.number().int('must be an integer').min(0, 'must be from 0 to 4294967295').max(0xffffffff, 'must be from 0 to 4294967295').optional(),
  });

/** The hash compared in constant time: equal lengths whatever the token sent. */
const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/** With a control token configured, the caller must send it as `Authorization: Bearer <token>`. */
function requireControlToken(request: IncomingMessage, controlToken: string | undefined): void {
  if (controlToken === undefined) return;
  const sent = /^Bearer (\S+)$/i.exec(header(request, 'authorization') ?? '')?.[1] ?? '';
  if (!timingSafeEqual(digest(sent), digest(controlToken))) {
    throw new ApiError(401, 'invalid_control_token', 'Send Authorization: Bearer followed by the sandbox control token (SANDBOX_CONTROL_TOKEN).');
  }
}

/** `GET /_control?processor=…` and `POST /_control { processor, declineRate?, outage?, seed? }`: the processor's control state. */
export async function answerControl(
  controls: readonly ProcessorControl[],
  controlToken: string | undefined,
  request: IncomingMessage,
  url: URL,
): Promise<JsonReply> {
  requireControlToken(request, controlToken);
  const names = controls.map(({ processor }) => processor);
  const controlOf = (name: string) => controls.find(({ processor }) => processor === name)!;
  if (request.method === 'GET') {
    const { processor } = parseInput(z.object({ processor: processorField(names) }), { processor: url.searchParams.get('processor') ?? undefined });
    return { status: 200, body: controlOf(processor).state() };
  }
  if (request.method === 'POST') {
    const { processor, ...changes } = parseInput(controlSchema(names), await readJson(request));
    const control = controlOf(processor);
    control.set(changes);
    return { status: 200, body: control.state() };
  }
  throw new ApiError(404, 'not_found', `There is no route ${request.method} ${url.pathname}.`);
}
