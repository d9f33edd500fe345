// PostgreSQL's plans as EXPLAIN (FORMAT JSON) answers them, for tests that say which scans a statement would run
// (the plans PostgreSQL keeps: docs/architecture.md, "Database access").

export interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

/** A row EXPLAIN (FORMAT JSON) answers. */
export interface ExplainRow {
  'QUERY PLAN': [{ Plan: PlanNode }];
}

/** Every node of a plan: the root, then each node under it, depth first. */
export const planNodes = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(planNodes)];
