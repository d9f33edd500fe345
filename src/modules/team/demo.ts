// The demo's dashboard owner (`npm start`): signs in to the demo merchant's dashboard with the password the demo's
// secrets file keeps (generated at random on its first start), set again on every start so the printed one works.
import type { TeamService } from './service.ts';

export const DEMO_OWNER_EMAIL = 'owner@demo.example';
const DEMO_OWNER_ID = 'usr_DemoOwner000000000000000';

export async function ensureDemoOwner(team: TeamService, merchantId: string, password: string): Promise<{ email: string }> {
  await team.ensureOwner({ id: DEMO_OWNER_ID, merchantId, email: DEMO_OWNER_EMAIL, password });
  return { email: DEMO_OWNER_EMAIL };
}
