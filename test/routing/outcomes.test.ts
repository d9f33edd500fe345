// What an authorization's outcome counts for (docs/routing.md, What counts, and where it is kept): only a
// processor failing (a timeout, no connection, a 5xx) counts against its circuit, never its rate limiting or a
// conflict; only a settled answer counts for the success rate, never one still pending or awaiting 3DS.
import { describe, expect, it } from 'vitest';
import { refusalOf as adyenRefusal } from '../../src/modules/connectors/adyen/decline-map.ts';
import { ConnectorError } from '../../src/modules/connectors/port.ts';
import { refusalOf as sandboxRefusal } from '../../src/modules/connectors/sandbox/decline-map.ts';
import { authorizedOf, processorFailed } from '../../src/modules/routing/service.ts';

describe('the circuit', () => {
  it('counts timeouts, lost connections and 5xx answers as the processor failing', () => {
    const failing = [
      new ConnectorError('late', 'timeout', true),
      new ConnectorError('gone', 'unreachable', true),
      sandboxRefusal('sandbox', 503, { error: { code: 'service_unavailable', message: 'outage' } }, 'the payment'),
      sandboxRefusal('sandbox', 500, 'not json', 'the payment'),
      adyenRefusal(502, null, 'the payment'),
    ];
    expect(failing.map(processorFailed)).toEqual(failing.map(() => true));
  });

  it('does not count rate limiting, conflicts or unreadable 4xx bodies: the processor answered', () => {
    const answered = [
      sandboxRefusal('sandbox', 429, { error: { code: 'rate_limited', message: 'slow down' } }, 'the payment'),
      sandboxRefusal('sandbox', 409, { error: { code: 'idempotency_conflict', message: 'in flight' } }, 'the payment'),
      sandboxRefusal('sandbox', 400, 'not json', 'the payment'),
      adyenRefusal(429, { status: 429, errorCode: '0', message: 'Too many requests', errorType: 'validation' }, 'the payment'),
      adyenRefusal(422, { status: 422, errorCode: '704', message: 'request already processed or in progress', errorType: 'validation' }, 'the payment'),
    ];
    expect(answered.map((error) => [error.kind, processorFailed(error)])).toEqual(answered.map(() => ['server_error', false]));
  });
});

describe('the success rate', () => {
  it('counts settled answers only', () => {
    const statuses = ['authorized', 'captured', 'partially_authorized', 'partially_captured', 'failed', 'authentication_failed'] as const;
    expect(statuses.map(authorizedOf)).toEqual([true, true, true, true, false, false]);
    const unsettled = ['pending', 'processing', 'requires_authentication', 'requires_device_data'] as const;
    expect(unsettled.map(authorizedOf)).toEqual([null, null, null, null]);
  });
});
