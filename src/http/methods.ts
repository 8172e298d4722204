// 405 rather than 404 for a path that exists under other methods (issue 13 finding 11: GET, PUT
// or OPTIONS on /v1/query was "no such route"), with the Allow header RFC 9110 asks of a 405.
// The table is built from the app's routes on first use, once every route is registered.

interface RouteLike {
  method: string;
  path: string;
}

/** A route path as a pattern: `:param` is one segment, `*` the rest. */
const patternOf = (path: string) =>
  new RegExp(
    `^${path
      .replace(/[.+?^${}()|[\]\\]/g, "\\$&")
      .replace(/:[^/]+/g, "[^/]+")
      .replace(/\*/g, ".*")}/?$`,
  );

/** The methods under which `path` is routed, sorted; none for a path no route has. */
export function allowedMethods(routes: () => readonly RouteLike[]): (path: string) => string[] {
  let table: Array<{ pattern: RegExp; methods: Set<string> }> | undefined;
  const build = () => {
    const byPath = new Map<string, Set<string>>();
    for (const r of routes()) {
      // A catch-all (the CORS preflight's OPTIONS /*) says nothing about any one path.
      if (r.path === "/*" || r.path === "*") continue;
      const methods = byPath.get(r.path) ?? new Set<string>();
      methods.add(r.method.toUpperCase());
      byPath.set(r.path, methods);
    }
    return [...byPath].map(([path, methods]) => ({ pattern: patternOf(path), methods }));
  };
  return (path) => {
    table ??= build();
    const allowed = new Set<string>();
    for (const t of table) if (t.pattern.test(path)) for (const m of t.methods) allowed.add(m);
    return [...allowed].sort();
  };
}
