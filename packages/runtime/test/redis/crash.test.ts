import { describeCrash } from "./crash-suite.js";
import { STANDALONE } from "./redis-test-env.js";

describeCrash("redis", STANDALONE);
