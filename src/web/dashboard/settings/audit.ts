// The merchant's audit log (docs/dashboard.md, "Audit log"), newest first, a page at a time: who did what to
// which subject, how it ended, when. Owners only; the API refuses other roles.
import { DashboardSettingsAuditLogDocument } from '../../gql/graphql.ts';
import { element } from '../../dom.ts';
import type { DashboardPage } from '../page.ts';
import { dateTime, pagedTable, tableRows } from '../shared-view.ts';
import { may, section } from './ui.ts';

export const page: DashboardPage = {
  route: /^settings\/audit$/,
  title: 'Audit log',
  navLabel: 'Audit log',
  async render(root, _params, context) {
    if (!may(context, 'readAudit')) return void root.replaceChildren(element('p', {}, 'Only owners read the audit log.'));
    const log = await pagedTable(
      'Audit log',
      'More entries',
      ['When', 'Who', 'What', 'Subject', 'Outcome'],
      async (after) => (await context.api.request(DashboardSettingsAuditLogDocument, { after })).auditLog,
      (entry) =>
        tableRows([
          [
            dateTime(entry.at),
            entry.userEmail ?? 'an API key',
            entry.action,
            entry.subjectId ? element('code', {}, entry.subjectId) : '—',
            element('span', { class: `badge ${entry.outcome === 'ok' ? 'status-succeeded' : 'status-failed'}` }, entry.outcome),
          ],
        ]),
      context.showFailure,
    );
    root.replaceChildren(section('What the team did', log));
  },
};
