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

export const when = (iso: string) => new Date(iso).toLocaleTimeString();
export const dateTime = (iso: string) => new Date(iso).toLocaleString();
/** A status as a coloured badge in words (`requires capture`). */
export const statusBadge = (status: string) => element('span', { class: `badge status-${status.toLowerCase()}` }, status.toLowerCase().replace(/_/g, ' '));

/** A table in its own sideways-scrolling container (a phone's width), reachable and named for the keyboard. */
export const scrollRegion = (label: string, shown: HTMLTableElement) =>
  element('div', { class: 'table-scroll', role: 'region', 'aria-label': label, tabindex: '0' }, shown);

export interface Connection<Item> {
  edges: { node: Item }[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

/**
 * A list as a table a page at a time: the first page now, each next one (after the last cursor) when `more`
 * is pressed; a failure goes to `fail`.
 */
export async function pagedTable<Item>(
  label: string,
  more: string,
  headings: string[],
  load: (after: string | null) => Promise<Connection<Item>>,
  rowsOf: (item: Item) => HTMLTableRowElement[],
  fail: (error: unknown) => void,
): Promise<HTMLElement> {
  const shown = table(headings, []);
  const button = element('button', { type: 'button', class: 'more' }, more);
  let after: string | null = null;
  const next = async () => {
    button.disabled = true; // one page at a time: a second click would append the same page twice
    try {
      const page = await load(after);
      shown.tBodies[0]!.append(...page.edges.flatMap((edge) => rowsOf(edge.node)));
      after = page.pageInfo.endCursor;
      button.hidden = !page.pageInfo.hasNextPage;
    } finally {
      button.disabled = false;
    }
  };
  button.addEventListener('click', () => void next().catch(fail));
  await next();
  return element('div', {}, scrollRegion(label, shown), button);
}
