// The demo's secrets (`npm start`): its ENCRYPTION_KEY, admin key, demo merchant keys and dashboard owner's password, generated at random
// on the first start and kept in a file of their own (DEMO_SECRETS_FILE, by default .demo/secrets.json,
// git-ignored, readable by its owner only). Later starts reuse them, so the printed keys stay the same;
// nothing in the repository tells what they are.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { generateDemoKeys } from '../modules/merchants/index.ts';
import { StartupError } from '../platform/startup-error.ts';

export const DEFAULT_DEMO_SECRETS_FILE = fileURLToPath(new URL('../../.demo/secrets.json', import.meta.url));

const demoSecretsSchema = z.object({
  encryptionKey: z.string().regex(/^[0-9a-f]{64}$/),
  adminApiKey: z.string().min(24),
  secretKey: z.string().min(1),
  publishableKey: z.string().min(1),
  paymentResponseHashKey: z.string().min(1),
  sandboxApiKey: z.string().min(1),
  /** The demo owner's dashboard password; files from before dashboard users lack it, and get one on the next start. */
  dashboardPassword: z.string().min(12).optional(),
});

export type DemoSecrets = Required<z.infer<typeof demoSecretsSchema>>;

const newDashboardPassword = () => randomBytes(24).toString('base64url');

/** The secrets in `file`, created there (mode 0600) when it does not exist yet. */
export function loadOrCreateDemoSecrets(file: string): DemoSecrets {
  const existing = readDemoSecrets(file);
  if (existing?.dashboardPassword) return { ...existing, dashboardPassword: existing.dashboardPassword };
  if (existing) {
    const secrets = { ...existing, dashboardPassword: newDashboardPassword() };
    writeFileSync(file, `${JSON.stringify(secrets, null, 2)}\n`, { mode: 0o600 });
    return secrets;
  }
  const secrets: DemoSecrets = {
    encryptionKey: randomBytes(32).toString('hex'),
    adminApiKey: `admin_${randomBytes(24).toString('hex')}`,
    ...generateDemoKeys(),
    dashboardPassword: newDashboardPassword(),
  };
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  writeFileSync(file, `${JSON.stringify(secrets, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  return secrets;
}

function readDemoSecrets(file: string): z.infer<typeof demoSecretsSchema> | null {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new StartupError(`cannot read the demo secrets file ${file} (${(error as NodeJS.ErrnoException).code})`);
  }
  const secrets = parseDemoSecrets(text);
  if (!secrets) throw new StartupError(`the demo secrets file ${file} is damaged; delete it and the demo database (dropdb payments) to start afresh`);
  return secrets;
}

function parseDemoSecrets(text: string): z.infer<typeof demoSecretsSchema> | null {
  try {
    return demoSecretsSchema.parse(JSON.parse(text));
  } catch {
    return null;
  }
}
