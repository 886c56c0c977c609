// Every feature of picomcp/redis across two instances on a real Sentinel set, then a sentinel killed,
// every process restarted and the master killed (failover): test/deployment-e2e.ts.

import { deploymentE2e } from "../deployment-e2e.js";
import { startSentinel, withDeployment } from "../redis-deployments.js";

deploymentE2e("two instances on Sentinel", withDeployment("sentinel"), startSentinel, async (d, check) => {
  await check("before any fault");
  await d.killSentinel(0);
  await check("a sentinel killed");
  await d.restartAll();
  await check("every process restarted");
  // last: a set restarted right after a failover waits ~10 s for its sentinels to make the old master a replica
  await d.killMaster();
  await check("the master killed");
});
