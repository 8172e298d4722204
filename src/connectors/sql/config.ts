// The config of a `sql` connector: the schema users send and the types the connector reads.
import { type Static, Type } from "@sinclair/typebox";

const Identifier = Type.String({
  pattern: "^[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)?$",
  maxLength: 128,
  description: "table or column name",
});

export const SqlTableSchema = Type.Object(
  {
    name: Identifier,
    id: Identifier,
    title: Identifier,
    text: Type.Array(Identifier, { minItems: 1, maxItems: 32 }),
    date: Type.Optional(Identifier),
    url: Type.Optional(Type.String({ pattern: "^https?://", maxLength: 2048, description: "source_url template with {id}" })),
  },
  { additionalProperties: false },
);
export type SqlTable = Static<typeof SqlTableSchema>;

export const SqlConfigSchema = Type.Object(
  {
    url: Type.String({
      minLength: 1,
      maxLength: 4096,
      description: "a SQLite file path or a postgres://, mysql:// or mariadb:// URL (stored encrypted)",
    }),
    tables: Type.Array(SqlTableSchema, { minItems: 1, maxItems: 50 }),
  },
  { additionalProperties: false },
);
export type SqlConfig = Static<typeof SqlConfigSchema>;
