import { describeCrash } from "./crash-suite.js";
import { redisCluster } from "./redis-cluster-env.js";

describeCrash("redis cluster", redisCluster());
