// The Chinook shop's SQLite file (shared data) as a MySQL/MariaDB script on stdout: its tables
// with their SQLite names (Invoice, InvoiceId …, as upstream's MySQL version names them), types
// mapped (NVARCHAR(n) to VARCHAR(n), NUMERIC(p,s) to DECIMAL(p,s)), every row. Run by
// scripts/test-servers.sh: `bun test/support/chinook-mysql.ts Chinook_Sqlite.sqlite | mariadb chinook`.
import { Database } from "bun:sqlite";

const file = process.argv[2];
if (!file) throw new Error("usage: bun test/support/chinook-mysql.ts Chinook_Sqlite.sqlite");
const db = new Database(file, { readonly: true });
const name = (id: string) => `\`${id.replaceAll("`", "``")}\``;

function mysqlType(sqlite: string): string {
  const t = sqlite.toUpperCase();
  if (t.startsWith("INT")) return "INT";
  if (t === "DATETIME") return "DATETIME";
  const text = /^N?VARCHAR\((\d+)\)$/.exec(t);
  if (text) return `VARCHAR(${text[1]})`;
  const decimal = /^NUMERIC\((\d+),(\d+)\)$/.exec(t);
  if (decimal) return `DECIMAL(${decimal[1]},${decimal[2]})`;
  throw new Error(`no MySQL type for ${sqlite}`);
}

/** A value as a MySQL literal (the server's default sql_mode: backslashes escape). */
const literal = (v: unknown) =>
  v === null ? "NULL" : typeof v === "number" ? String(v) : `'${String(v).replaceAll("\\", "\\\\").replaceAll("'", "''")}'`;

const out = ["SET NAMES utf8mb4;"];
const tables = db
  .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
  .all();
for (const { name: table } of tables) {
  const columns = db
    .query<{ name: string; type: string; notnull: number; pk: number }, [string]>(
      `SELECT name, type, "notnull", pk FROM pragma_table_info(?)`,
    )
    .all(table);
  const key = columns
    .filter((c) => c.pk > 0)
    .sort((a, b) => a.pk - b.pk)
    .map((c) => name(c.name));
  const defined = columns.map((c) => `${name(c.name)} ${mysqlType(c.type)}${c.notnull ? " NOT NULL" : ""}`);
  out.push(
    `CREATE TABLE ${name(table)} (${[...defined, `PRIMARY KEY (${key.join(", ")})`].join(", ")}) DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;`,
  );
  const rows = db.query(`SELECT * FROM "${table}"`).values() as unknown[][];
  for (let i = 0; i < rows.length; i += 500)
    out.push(
      `INSERT INTO ${name(table)} VALUES ${rows
        .slice(i, i + 500)
        .map((r) => `(${r.map(literal).join(",")})`)
        .join(",\n")};`,
    );
}
console.log(out.join("\n"));
