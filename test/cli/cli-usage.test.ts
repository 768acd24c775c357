import { describe, expect, it } from '@jest/globals';
import { cli } from './run-cli.js';

// Port 1: nothing listens. A store that was contacted would fail with exit 1, so an exit 2 here
// also says the command line was refused before anything reached the store.
const STORE = ['--redis', 'redis://127.0.0.1:1'];

describe('the CLI on a bad command line: exit 2, the error and the usage on stderr, nothing on stdout', () => {
  it.each([
    ['no arguments at all', [], /name a command/],
    ['no store', ['list'], /name the store: --redis/],
    ['two stores', ['list', ...STORE, '--etcd', 'http://127.0.0.1:1'], /one store at a time, got --redis, --etcd/],
    ['an unknown command', ['frobnicate', ...STORE], /unknown command "frobnicate"/],
    ['an unknown option', ['list', '--bogus', ...STORE], /unknown option --bogus/],
    ['a store flag without its value', ['list', '--redis'], /--redis needs a value/],
    ['an option without its value, followed by another option', ['list', '--limit', ...STORE], /--limit needs a value/],
    ['a value given to a switch', ['list', '--json=yes', ...STORE], /--json/],
    [
      '--limit out of range',
      ['list', '--limit', '5000', ...STORE],
      /--limit takes a whole number from 1 to 1000, got "5000"/,
    ],
    ['--limit 0', ['list', '--limit', '0', ...STORE], /--limit takes a whole number/],
    ['--limit not whole', ['list', '--limit', '1.5', ...STORE], /--limit takes a whole number/],
    ['inspect without a key', ['inspect', ...STORE], /inspect needs a KEY/],
    ['release with an empty key', ['release', '', ...STORE], /release needs a KEY/],
    ['an extra argument', ['list', 'a', 'b', ...STORE], /unexpected argument "b"/],
    ['--watch on inspect', ['inspect', 'k', '--watch', ...STORE], /--watch goes with list/],
    ['--interval without --watch', ['list', '--interval', '1', ...STORE], /--interval goes with --watch/],
    [
      '--interval out of range',
      ['list', '--watch', '--interval', '0', ...STORE],
      /--interval takes seconds from 0.1 to 3600, got "0"/,
    ],
    ['a store URL that is not one', ['list', '--redis', 'http://127.0.0.1:1'], /must start with redis:\/\//],
    [
      'a key longer than the library allows',
      ['inspect', 'x'.repeat(70_000), ...STORE],
      /Lock key is 70000 characters long/,
    ],
  ])('%s', async (_, args, message) => {
    const run = await cli(args);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^error: /);
    expect(run.stderr.split('\n')[0]).toMatch(message);
    expect(run.stderr).toContain('Usage: nestjs-distributed-lock <command>');
  });

  it('--prefix (renamed) says to use --key-prefix, or to give a key filter after list', async () => {
    for (const args of [
      ['list', '--prefix', 'order:', ...STORE],
      ['list', '--prefix=order:', ...STORE],
    ]) {
      const run = await cli(args);
      expect(run.code).toBe(2);
      expect(run.stderr.split('\n')[0]).toBe(
        "error: --prefix is now --key-prefix (the app's keyPrefix option); to list the keys that start with order:, give it after list: `list order:`",
      );
    }
  });

  it('--help and -h print the usage on stdout and exit 0, whatever else is given', async () => {
    for (const args of [['--help'], ['-h'], ['list', '--help', '--limit', '5000']]) {
      const run = await cli(args);
      expect(run).toMatchObject({ code: 0, stderr: '' });
      expect(run.stdout).toMatch(/^Usage: nestjs-distributed-lock <command>/);
      expect(run.stdout).toContain('Exit codes: 0 done, 1 store failure or release not confirmed, 2 bad command line.');
    }
  });
});
