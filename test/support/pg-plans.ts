// What a SQL connector asks of PostgreSQL, and what PostgreSQL read to answer it: the statements
// sent on a table through the connector's own driver, and each one's rows read from the table, as
// PostgreSQL's own EXPLAIN ANALYZE counts them (kept and filtered out, over its loops).
import type postgres from "postgres";
import { SqlConnector } from "../../src/connectors/sql/connector";
import { allowList, pinner } from "../../src/net/pin";

export interface Statement {
  sql: string;
  params: unknown[];
}

interface PlanNode {
  "Relation Name"?: string;
  "Actual Rows": number;
  "Actual Loops": number;
  "Rows Removed by Filter"?: number;
  Plans?: PlanNode[];
}

const LOOPBACK = { pin: pinner(allowList("127.0.0.1")) };

function rowsRead(node: PlanNode, table: string): number {
  const own = node["Relation Name"] === table ? (node["Actual Rows"] + (node["Rows Removed by Filter"] ?? 0)) * node["Actual Loops"] : 0;
  return own + (node.Plans ?? []).reduce((n, p) => n + rowsRead(p, table), 0);
}

/** The statements `read` sends on `table` (of `url`, mapped as `mapping`); `onSent` runs as each one is answered. */
export async function statementsOn(
  url: string,
  mapping: { name: string; id: string; title: string; text: string[]; date?: string },
  read: (c: SqlConnector) => Promise<unknown>,
  onSent: () => void = () => {},
): Promise<Statement[]> {
  const c = new SqlConnector({ url, tables: [mapping] }, undefined, LOOPBACK);
  const sent: Statement[] = [];
  try {
    const driver = await (c as unknown as { open(): Promise<{ select(sql: string, params: unknown[]): Promise<unknown[]> }> }).open();
    const select = driver.select.bind(driver);
    driver.select = async (sql, params) => {
      const rows = await select(sql, params);
      if (sql.includes(`FROM "${mapping.name}"`)) {
        sent.push({ sql, params });
        onSent();
      }
      return rows;
    };
    await read(c);
  } finally {
    await c.close();
  }
  return sent;
}

/** For each statement, the rows PostgreSQL read from `table` to answer it. */
export async function rowsReadBy(admin: ReturnType<typeof postgres>, table: string, statements: Statement[]): Promise<number[]> {
  const out: number[] = [];
  for (const s of statements) {
    const [row] = await admin.unsafe(`EXPLAIN (ANALYZE, FORMAT JSON) ${s.sql}`, s.params as never[]);
    out.push(rowsRead((row as unknown as { "QUERY PLAN": Array<{ Plan: PlanNode }> })["QUERY PLAN"][0]!.Plan, table));
  }
  return out;
}
