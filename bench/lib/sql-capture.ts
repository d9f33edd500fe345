// Preloaded into the API's and the worker's processes by the bench (`--import`): on request ("sql-capture-start"
// then "sql-capture-stop" over IPC) it records the text of every SQL statement node-postgres sends in between,
// so the run can show which statements one createPayment (API) or one webhook delivery (worker) issues beside
// the pgbench script that replays them. Outside a capture it costs one branch per query.
import pg from 'pg';
import { answer } from './ipc.ts';

let captured: string[] | null = null;
type Query = (this: pg.Client, ...args: unknown[]) => unknown;
const original = pg.Client.prototype.query as unknown as Query;
(pg.Client.prototype as unknown as { query: Query }).query = function (this: pg.Client, ...args: unknown[]) {
  if (captured !== null) {
    const first = args[0] as string | { text?: string } | undefined;
    captured.push(typeof first === 'string' ? first : (first?.text ?? '?'));
  }
  return original.apply(this, args);
};

answer('sql-capture-start', () => {
  captured = [];
  return {};
});

answer('sql-capture-stop', () => {
  const statements = captured ?? [];
  captured = null;
  return { statements };
});
