// The sandbox processor's callback signature, computed here from its contract (`t=<unix seconds>,v1=<hex
// HMAC-SHA256 of "<t>.<body>">`, keyed with the connector account's webhook secret), independently of the
// service's verifier and the sandbox's signer: what a test sends as the processor.
import { createHmac } from 'node:crypto';

export const sandboxSignature = (body: string | Buffer, secret: string, at = Math.floor(Date.now() / 1000)) =>
  `t=${at},v1=${createHmac('sha256', secret).update(`${at}.`).update(body).digest('hex')}`;
