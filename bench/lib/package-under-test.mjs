// The built package the bench measures: dist/esm (after `npm run build`), or the esm build named
// by NDL_BENCH_DIST (an index.js path), e.g. a private build that a concurrent `npm run build`
// in the same tree cannot delete halfway through a run.
import { pathToFileURL } from 'node:url';

const url = process.env.NDL_BENCH_DIST
  ? pathToFileURL(process.env.NDL_BENCH_DIST).href
  : new URL('../../dist/esm/index.js', import.meta.url).href;

export const loadPackage = () => import(url);

/** The package's index.js URL, to reach an internal module next to it (same module instance as the package's). */
export const packageUrl = url;
