// What the connector room refuses, by meaning; http/errors.ts gives each its status.
import { DomainError } from "../errors";

/** No connector of this user (or the operator's) has this id. */
export class ConnectorNotFound extends DomainError {
  constructor(id: string, yours?: readonly string[]) {
    super("not_found", yours ? `no connector with id ${id}; yours are: ${yours.join(", ") || "none"}` : `no connector with id ${id}`);
  }
}

/** The user has a connector with this id already. */
export class ConnectorExists extends DomainError {
  constructor(id: string) {
    super("conflict", `a connector with id ${id} already exists`);
  }
}

/** An operator connector (CORPUS_CONNECTORS_FILE) is changed or removed there, never through the API. */
export class OperatorConnector extends DomainError {
  constructor(id: string, how: "changed in" | "removed from") {
    super("forbidden", `${id} is an operator connector; it is ${how} CORPUS_CONNECTORS_FILE`);
  }
}

/** The service is closing (server stop): no connector is started or asked any more. */
export class ConnectorsClosing extends DomainError {
  constructor() {
    super("unavailable", "the service is closing");
  }
}
