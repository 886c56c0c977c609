// Every feature of picomcp/redis across two instances on a real 6-node Redis Cluster, then a master
// killed (failover) and every node restarted: test/deployment-e2e.ts.
import { deploymentE2e } from "../deployment-e2e.js";
import { startCluster, withDeployment } from "../redis-deployments.js";

deploymentE2e(
  "two instances on a Redis Cluster",
  withDeployment("cluster"),
  startCluster,
  async (d, check) => {
    await check("before any fault");
    await d.killMaster(0);
    await check("a master killed");
    await d.restartAll();
    await check("every node restarted");
  },
);
