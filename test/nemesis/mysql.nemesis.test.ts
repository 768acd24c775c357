import { describeNemesis } from './nemesis-suite.js';

describeNemesis('mysql');
