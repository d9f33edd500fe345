// What the dashboard's pages draw alike: tables and the routing algorithms' names (docs/routing.md).
import type { RoutingAlgorithmType } from '../gql/graphql.ts';
import { element } from '../dom.ts';

export const ALGORITHM_NAMES: Record<RoutingAlgorithmType, string> = {
  PRIORITY: 'Priority',
  VOLUME_SPLIT: 'Volume split',
  RULES: 'Rules',
  SUCCESS_RATE: 'Success rate',
};

export const tableRows = (body: (Node | string)[][]) => body.map((cellsOfRow) => element('tr', {}, ...cellsOfRow.map((cell) => element('td', {}, cell))));

export function table(headings: string[], body: (Node | string)[][]): HTMLTableElement {
  return element(
    'table',
    {},
    element('thead', {}, element('tr', {}, ...headings.map((heading) => element('th', { scope: 'col' }, heading)))),
    element('tbody', {}, ...tableRows(body)),
  );
}
