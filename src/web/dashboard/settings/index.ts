// The settings pages in the navigation's order (docs/dashboard.md).
import type { DashboardPage } from '../page.ts';
import { page as apiKeys } from './api-keys.ts';
import { page as audit } from './audit.ts';
import { page as connectors } from './connectors.ts';
import { page as routing } from './routing.ts';
import { page as team } from './team.ts';
import { page as webhooks } from './webhooks.ts';

export const settingsPages: DashboardPage[] = [webhooks, connectors, routing, apiKeys, team, audit];
