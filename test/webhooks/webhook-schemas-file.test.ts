import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { SCHEMAS_DIRECTORY, generatedWebhookFiles } from '../../scripts/webhook-schemas.ts';

it('packages/node/schemas/*.json and the SDK’s webhook types are what the wire schemas generate (run `npm run generate:webhook-schemas` after changing a wire.ts)', async () => {
  const files = await generatedWebhookFiles();
  for (const [url, content] of files) expect(readFileSync(url, 'utf8'), fileURLToPath(url)).toBe(content);
  // No schema left over from an object that is gone.
  const generated = [...files.keys()].map((url) => url.href);
  for (const file of readdirSync(SCHEMAS_DIRECTORY)) expect(generated).toContain(new URL(file, SCHEMAS_DIRECTORY).href);
});
