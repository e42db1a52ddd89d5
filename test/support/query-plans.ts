import { Prisma, type PrismaClient } from '../../src/generated/prisma/client.js';

/** The part of an `EXPLAIN (ANALYZE, FORMAT JSON)` node that the plan tests read. */
export interface PlanNode {
  'Relation Name'?: string;
  'Index Cond'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Join Filter'?: number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

/**
 * Runs the statement under EXPLAIN ANALYZE in a transaction that is rolled back, so a statement
 * that writes changes nothing, and answers its plan as it ran.
 */
export async function explainAnalyze(prisma: PrismaClient, statement: Prisma.Sql): Promise<PlanNode> {
  const rolledBack = new Error('rolled back');
  let plan: PlanNode | undefined;
  await prisma
    .$transaction(async (tx) => {
      const [row] = await tx.$queryRaw<{ 'QUERY PLAN': [{ Plan: PlanNode }] }[]>(
        Prisma.sql`EXPLAIN (ANALYZE, FORMAT JSON) ${statement}`,
      );
      plan = row!['QUERY PLAN'][0].Plan;
      throw rolledBack;
    })
    .catch((error: unknown) => {
      if (error !== rolledBack) throw error;
    });
  return plan!;
}

export function planNodes(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(planNodes)];
}

/**
 * Rows the plan read only to throw away, in joins and in filters over every loop: what grows
 * with the square of the rows when a plan compares each row of one side with all of the other.
 */
export function rowsThrownAway(plan: PlanNode): number {
  return planNodes(plan).reduce(
    (sum, node) =>
      sum +
      (node['Rows Removed by Join Filter'] ?? 0) +
      (node['Rows Removed by Filter'] ?? 0) * (node['Actual Loops'] ?? 1),
    0,
  );
}
