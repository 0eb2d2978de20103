import { describeScheduleStore } from "./redis-store-suite.js";
import { STANDALONE } from "../redis/redis-test-env.js";

describeScheduleStore("Redis schedule store", STANDALONE);
