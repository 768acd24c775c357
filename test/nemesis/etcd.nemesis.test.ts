import { describeNemesis } from './nemesis-suite.js';

describeNemesis('etcd');
