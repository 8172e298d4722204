// What an MCP Apps host does around a view, for the tests that frame corpus's connector panel.

/** A resource's declared domains (MCP Apps, McpUiResourceCsp). */
export interface DeclaredCsp {
  connectDomains?: string[];
  resourceDomains?: string[];
}

/** The CSP a host builds from a resource's declared domains: nothing beyond what it declares. */
export function hostCspOf(csp: DeclaredCsp): string {
  const resources = (csp.resourceDomains ?? []).join(" ");
  return [
    "default-src 'none'",
    `script-src 'unsafe-inline' ${resources}`,
    `style-src 'unsafe-inline' ${resources}`,
    `img-src data: ${resources}`,
    `connect-src ${(csp.connectDomains ?? []).join(" ") || "'none'"}`,
    "frame-src 'none'",
    "base-uri 'self'",
    "form-action 'none'",
  ].join("; ");
}
