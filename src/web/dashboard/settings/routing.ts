// Each business profile's active routing algorithm in the session's mode and its connector order
// (docs/routing.md), read-only: algorithms are set through the API.
import { DashboardSettingsProfilesDocument } from '../../gql/graphql.ts';
import { element } from '../../dom.ts';
import type { DashboardPage } from '../page.ts';
import { ALGORITHM_NAMES, dateTime } from '../shared-view.ts';
import { scrollingTable, section } from './ui.ts';

export const page: DashboardPage = {
  route: /^settings\/routing$/,
  title: 'Routing',
  navLabel: 'Routing',
  async render(root, _params, context) {
    const { businessProfiles } = await context.api.request(DashboardSettingsProfilesDocument, {});
    root.replaceChildren(
      section(
        `Routing in ${context.mode.toLowerCase()} mode`,
        element('p', {}, 'Routing algorithms are set through the API (setRoutingAlgorithm); a profile without one tries its connectors in order.'),
        scrollingTable(
          'Routing of each business profile',
          ['Profile', 'Algorithm', 'Since', 'Connector order'],
          businessProfiles.map((profile) => [
            profile.name,
            profile.routingAlgorithm ? ALGORITHM_NAMES[profile.routingAlgorithm.type] : 'None: the connector order',
            profile.routingAlgorithm ? dateTime(profile.routingAlgorithm.createdAt) : '—',
            profile.routing.length ? profile.routing.join(', ') : 'the accounts’ default order',
          ]),
        ),
      ),
    );
  },
};
