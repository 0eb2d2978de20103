import { describeScheduleStore } from "./redis-store-suite.js";
import { redisCluster } from "../redis/redis-cluster-env.js";

describeScheduleStore("Redis schedule store on a Redis Cluster", redisCluster());
