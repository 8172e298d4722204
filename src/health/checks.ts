// What the health routes report on. Each room that a health route speaks for registers a
// check; a route is healthy only while all of its checks pass.
export interface HealthResult {
  healthy: boolean;
  reason?: string;
}
export type HealthCheck = () => HealthResult | Promise<HealthResult>;

export interface HealthChecks {
  auth: HealthCheck[];
  connectors: HealthCheck[];
}

export async function runChecks(checks: HealthCheck[]): Promise<HealthResult> {
  for (const check of checks) {
    let result: HealthResult;
    try {
      result = await check();
    } catch (error) {
      result = { healthy: false, reason: error instanceof Error ? error.message : "check failed" };
    }
    if (!result.healthy) return result;
  }
  return { healthy: true };
}
