// A `sql` connector's URL: a SQLite path, or a postgres://, mysql:// or mariadb:// server, read
// by corpus itself (D26). Anything else with a scheme is named as such: `mysql://` was once
// taken for a SQLite path and refused with "the path must be absolute".
import { describe, expect, test } from "bun:test";
import { publicConfig, validateConfig } from "../../src/connectors/definition";
import { KINDS } from "../../src/connectors/kinds";
import { parseServerUrl } from "../../src/connectors/sql/server-url";

const tables = [{ name: "Invoice", id: "InvoiceId", title: "BillingCity", text: ["BillingCountry"] }];

describe("a sql connector's URL scheme", () => {
  test.each(["oracle://shop:pw@db.example/orcl", "MSSQL://db.example/shop", "sqlite:///srv/shop.sqlite", "ftp://files.example/shop.db"])(
    "%s: the scheme is named as not supported, with those that are",
    (url) => {
      const scheme = url.slice(0, url.indexOf("://")).toLowerCase();
      expect(() => validateConfig("sql", { url, tables }, "config")).toThrow(
        `config.url: the scheme "${scheme}://" is not supported: give a SQLite file path or a postgres://, postgresql://, mysql://, mariadb:// URL`,
      );
    },
  );

  test("mysql:// and mariadb:// are servers (their host checked, D26), never a local path", () => {
    for (const url of ["mysql://shop:pw@db.example:3307/chinook", "mariadb://shop@db.example/chinook?sslmode=require"]) {
      expect(validateConfig("sql", { url, tables }, "config")).toEqual({ url, tables });
      expect(KINDS.sql.remoteHost({ url, tables })).toEqual({ host: "db.example", field: "config.url" });
      expect(KINDS.sql.localPath({ url, tables })).toBeUndefined();
    }
    expect(KINDS.sql.localPath({ url: "/srv/shop.sqlite", tables })).toBe("url");
  });

  test("a MySQL URL is read as a PostgreSQL one: one host, a user and a database required, only sslmode", () => {
    expect(parseServerUrl("mysql://shop:p%40ss@DB.example/chinook?sslmode=verify-full")).toEqual({
      engine: "mysql",
      host: "db.example",
      port: 3306,
      user: "shop",
      password: "p@ss",
      database: "chinook",
      sslmode: "verify-full",
    });
    expect(parseServerUrl("MariaDB://shop@127.1:3310/shop")).toMatchObject({
      engine: "mysql",
      host: "127.0.0.1",
      port: 3310,
      password: "",
    });
    for (const [url, message] of [
      ["mysql://127.0.0.1/chinook", "must name the user (mysql://user:password@host:3306/database)"],
      ["mysql://shop@db.example", "must name the database (mysql://user:password@host:3306/database)"],
      ["mysql://shop@db.example/", "must name the database"],
      ["mysql://shop@h1,h2/chinook", "one host name or IP address"],
      ["mariadb://shop@%2Fvar%2Frun%2Fmysqld.sock/chinook", "one host name or IP address"],
      ["mysql://shop@db.example/chinook?socket=/run/mysqld/mysqld.sock", 'parameter "socket" is not allowed'],
      ["mysql://shop@db.example/chinook?ssl-mode=DISABLED", 'parameter "ssl-mode" is not allowed'],
      ["mysql://shop@db.example/chinook?sslmode=prefer", "sslmode must be one of disable, require, verify-full"],
      ["mysql://shop@db.example/a/b", "just the database name"],
    ] as const)
      expect(() => parseServerUrl(url)).toThrow(message);
  });

  test("a MySQL URL's password is never shown; sent back as shown, it is kept only where it went", () => {
    const url = "mysql://shop:s3cret-pw@db.example:3306/chinook";
    expect(publicConfig("sql", { url, tables })).toEqual({ url: "mysql://shop:***@db.example:3306/chinook", tables });
    const shown = "mariadb://shop:***@db.example:3306/chinook";
    expect(KINDS.sql.keepSecrets({ url: "mysql://shop:***@db.example:3306/chinook" }, { url, tables })).toEqual({ url });
    expect(() => KINDS.sql.keepSecrets({ url: "mysql://shop:***@other.example:3306/chinook" }, { url, tables })).toThrow(
      "give the password again",
    );
    expect(() => KINDS.sql.keepSecrets({ url: shown }, { url, tables })).toThrow("give the password again");
  });
});
