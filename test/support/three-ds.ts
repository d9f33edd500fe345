// The sandbox's 3D Secure page, driven as the customer's browser drives it.
import { expect } from 'vitest';

/** Opens the challenge at `redirectToUrl` and answers it; returns where the processor sends the browser back (our redirect-response route). */
export async function answerChallenge(redirectToUrl: string, outcome: 'complete' | 'fail'): Promise<URL> {
  const page = await fetch(redirectToUrl);
  expect(page.status).toBe(200);
  const submitted = await fetch(`${redirectToUrl}/${outcome}`, { method: 'POST', redirect: 'manual' });
  expect(submitted.status).toBe(303);
  return new URL(submitted.headers.get('location')!);
}

/** Answers the challenge and comes back through our redirect-response route; returns where the browser ends up. */
export async function completeChallenge(redirectToUrl: string, outcome: 'complete' | 'fail'): Promise<URL> {
  const back = await fetch(await answerChallenge(redirectToUrl, outcome), { redirect: 'manual' });
  expect(back.status).toBe(302);
  return new URL(back.headers.get('location')!);
}
