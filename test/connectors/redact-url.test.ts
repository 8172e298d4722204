// A database URL is shown (GET /v1/connectors) and put in messages without any secret in it
// (D20; issue 13, item 12): not the password of its user part, nor one given as a parameter.
import { describe, expect, test } from "bun:test";
import { publicConfig } from "../../src/connectors/registry";
import { redactUrl } from "../../src/connectors/sql/connector";

const SECRET = "hunter2-Secret";

describe("redactUrl", () => {
  test("the password of the user part is masked", () => {
    expect(redactUrl(`postgres://shop:${SECRET}@db.internal:5432/shop`)).toBe("postgres://shop:***@db.internal:5432/shop");
  });

  test("password, sslpassword, passfile and other secret-looking parameters are masked; the rest is kept", () => {
    const shown = redactUrl(
      `postgresql://shop@db.internal/shop?sslmode=require&password=${SECRET}&sslpassword=${SECRET}&passfile=/home/op/.pgpass&sslkey=/etc/k.pem&PassWord=${SECRET}&application_name=x`,
    );
    expect(shown).not.toContain(SECRET);
    expect(shown).not.toContain(".pgpass");
    const params = new URL(shown).searchParams;
    expect(params.get("password")).toBe("***");
    expect(params.get("sslpassword")).toBe("***");
    expect(params.get("passfile")).toBe("***");
    expect(params.get("PassWord")).toBe("***");
    expect(params.get("sslmode")).toBe("require");
    expect(params.get("application_name")).toBe("x");
  });

  test("a MySQL or MariaDB URL's password and secret parameters are masked; so is any URL's, even of a scheme not supported", () => {
    expect(redactUrl(`mysql://shop:${SECRET}@db.internal:3306/shop`)).toBe("mysql://shop:***@db.internal:3306/shop");
    expect(redactUrl(`mariadb://shop@db.internal/shop?password=${SECRET}&sslmode=require`)).toBe(
      "mariadb://shop@db.internal/shop?password=***&sslmode=require",
    );
    // Refused when added, but an old stored config or a message may still hold one.
    expect(redactUrl(`oracle://shop:${SECRET}@db.internal/orcl`)).toBe("oracle://shop:***@db.internal/orcl");
    expect(redactUrl("/srv/shop.sqlite")).toBe("/srv/shop.sqlite");
  });

  test("an encoded or repeated parameter name is masked too", () => {
    const shown = redactUrl(`postgres://u@h/d?pass%77ord=${SECRET}&password=a&password=${SECRET}`);
    expect(shown).not.toContain(SECRET);
    expect(shown).not.toContain("hunter2");
  });

  test("the shown config of a sql connector carries the masked URL", () => {
    const shown = publicConfig("sql", {
      url: `postgres://u@h/d?password=${SECRET}`,
      tables: [{ name: "t", id: "id", title: "title", text: ["body"] }],
    });
    expect(JSON.stringify(shown)).not.toContain(SECRET);
  });
});
