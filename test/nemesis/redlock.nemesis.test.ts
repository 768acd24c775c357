import { describeNemesis } from './nemesis-suite.js';

// Five masters; no fences, so only the canary is written. "majorities ring" leaves each client a
// different majority of the masters: any two majorities share a master, so one holder at a time.
describeNemesis('redlock', [
  'majorities ring',
  'partition',
  'partition replies',
  'pause before write',
  'block loop',
  'restart store',
  'slow clock',
]);
