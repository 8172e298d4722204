// Attack: letters that no accent makes ("ł", "ø", "đ", "ı", "ð", and "ß", "æ", "þ", which stand
// for two), asked of a live SQL source without them, or with them where the table has none. NFKD
// leaves these letters whole: "Lodz" did not find "Łódź", "Tromso" "Tromsø", "strasse"
// "Straße" on any engine (MariaDB's utf8mb4_unicode_ci keeps "ł" and "ø" letters of their own,
// and its LIKE compares "ß" with one letter). One table, the same rows, on SQLite, PostgreSQL and
// MariaDB (the real servers the test runner starts).
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { SqlConnector } from "../../src/connectors/sql/connector";
import { allowList, pinner } from "../../src/net/pin";
import { planQuery } from "../../src/retrieval/plan";
import { tempDir } from "../helpers";
import { mysqlTable } from "../support/mysql-admin";
import { shopTable } from "../support/pg-tables";

setDefaultTimeout(60_000);

const LOOPBACK = { pin: pinner(allowList("127.0.0.1")) };
const TABLE = "folded_letters";
const ROWS: Array<[number, string, string]> = [
  [1, "Łukasz Nowak", "Łódź"],
  [2, "Bjørn Hansen", "Tromsø"],
  [3, "Ivan Đurić", "Đakovo"],
  [4, "Hannah Schneider", "Tauentzienstraße 8"],
  [5, "Karl Weiss", "Hauptstrasse 1"],
  [6, "Mette Ærø", "Marstal"],
  [7, "Þórr Sigurðsson", "Reykjavík"],
  [8, "Hotel am Schloßsee", "Brandenburg"],
  [9, "John Smith", "London"],
  [10, "Ahmet Işık", "Ankara"],
  [11, "GROẞE STRAẞE 3", "Berlin"],
];
const mapping = { name: TABLE, id: "id", title: "name", text: ["name", "city"] };

const values = ROWS.map(([id, name, city]) => `(${id}, '${name}', '${city}')`).join(", ");
const databases = {
  sqlite: async () => {
    const path = join(tempDir("corpus-sql-fold-letters-"), "letters.sqlite");
    const db = new Database(path);
    db.exec(`CREATE TABLE ${TABLE} (id INTEGER PRIMARY KEY, name TEXT, city TEXT); INSERT INTO ${TABLE} VALUES ${values}`);
    db.close();
    return { url: path, drop: async () => {} };
  },
  postgres: async () => {
    const made = await shopTable(TABLE, async (admin) => {
      await admin.unsafe(`CREATE TABLE ${TABLE} (id integer PRIMARY KEY, name text, city text)`);
      await admin.unsafe(`INSERT INTO ${TABLE} VALUES ${values}`);
    });
    return { url: made.pgUrl, drop: made.drop };
  },
  // A binary collation on one column: the folding is the connector's, not the column's.
  mysql: () =>
    mysqlTable(TABLE, async (admin) => {
      await admin.unsafe(
        `CREATE TABLE ${TABLE} (id INT PRIMARY KEY, name VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin, city VARCHAR(64) CHARACTER SET utf8mb4)`,
      );
      await admin.unsafe(`INSERT INTO ${TABLE} VALUES ${values}`);
    }),
};

for (const dialect of ["sqlite", "postgres", "mysql"] as const) {
  describe(`sql (${dialect}): letters no accent makes, asked without them or with them`, () => {
    let made: { url: string; drop(): Promise<void> };
    let c: SqlConnector;
    beforeAll(async () => {
      made = await databases[dialect]();
      c = new SqlConnector({ url: made.url, tables: [mapping] }, undefined, LOOPBACK);
    });
    afterAll(async () => {
      await c?.close();
      await made?.drop();
    });

    const ids = async (needle: string) =>
      (await c.search({ terms: [needle], phrases: [], limit: 20 })).map((r) => Number(r.id.split("/")[1])).sort((a, b) => a - b);

    test("'Lodz', 'Tromso', 'Dakovo', 'Isik': a letter of one ('ł', 'ø', 'đ', 'ı') typed as its plain letter", async () => {
      expect(await ids("lodz")).toEqual([1]);
      expect(await ids("LODZ")).toEqual([1]);
      expect(await ids("Lukasz")).toEqual([1]);
      expect(await ids("tromso")).toEqual([2]);
      expect(await ids("Bjorn")).toEqual([2]);
      expect(await ids("dakovo")).toEqual([3]);
      expect(await ids("Duric")).toEqual([3]);
      expect(await ids("isik")).toEqual([10]);
      expect(await ids("Sigurdsson")).toEqual([7]);
    });

    test("'strasse', 'aero', 'thorr': a letter of two ('ß', 'æ', 'þ', 'ẞ') typed as its two letters", async () => {
      expect(await ids("Tauentzienstrasse")).toEqual([4]);
      // A whole word, as the index matches words (sql-whole-words.test.ts): not inside "Hauptstrasse".
      expect(await ids("strasse")).toEqual([11]);
      expect(await ids("Hauptstrasse")).toEqual([5]);
      expect(await ids("grosse")).toEqual([11]);
      expect(await ids("aero")).toEqual([6]);
      expect(await ids("Thorr")).toEqual([7]);
      expect(await ids("thor")).toEqual([]);
      // Three s, however they are written: "Schloßsee" is "ß" and "s".
      expect(await ids("schlosssee")).toEqual([8]);
    });

    test("the reverse: 'Hauptstraße', 'Łódź' asked where the table writes them plainly or otherwise", async () => {
      expect(await ids("Hauptstraße")).toEqual([5]);
      expect(await ids("STRAẞE")).toEqual([11]);
      expect(await ids("TAUENTZIENSTRASSE")).toEqual([4]);
      expect(await ids("Łodz")).toEqual([1]);
      expect(await ids("Schloßsee")).toEqual([8]);
    });

    test("control: other words are not found; 'smith' finds Smith alone", async () => {
      expect(await ids("smith")).toEqual([9]);
      expect(await ids("lodzk")).toEqual([]);
      expect(await ids("strase")).toEqual([]);
    });

    test("a question as typed: 'customers in Lodz', 'who lives on Hauptstraße?'", async () => {
      const ask = async (question: string) => {
        const { terms, phrases } = planQuery(question);
        return (await c.search({ terms, phrases, limit: 20 })).map((r) => Number(r.id.split("/")[1]));
      };
      expect(await ask("customers in Lodz")).toEqual([1]);
      expect(await ask("who lives on Hauptstraße?")).toEqual([5]);
    });

    test("a needle of 64 s (its ways of writing with ß are a Fibonacci number) is asked in bounded form, and answered", async () => {
      expect(await ids("s".repeat(64))).toEqual([]);
      expect(await ids("ß".repeat(32))).toEqual([]);
    });

    test("a word of 1,500 'ß' or 'æ' is asked by its start, and answered: a pattern of each letter's forms grew past what the engine takes", async () => {
      expect(await ids("ß".repeat(1_500))).toEqual([]);
      expect(await ids("æ".repeat(1_500))).toEqual([]);
      // Its start found, the whole not: the row is dropped.
      expect(await ids(`Hauptstrasse${"ß".repeat(100)}`)).toEqual([]);
      expect(await ids(`${"Tauentzienstraße".repeat(10)}`)).toEqual([]);
    });
  });
}
