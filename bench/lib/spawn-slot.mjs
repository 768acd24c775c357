// Runs slots in fresh child processes and collects their `RESULT` lines.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const SLOT = fileURLToPath(new URL('./slot.mjs', import.meta.url));

/** Starts one slot; returns { child, lines: async iterator helpers, result: Promise }. */
export function startSlot(spec, { timeoutMs = 180_000 } = {}) {
  const child = spawn(process.execPath, ['--expose-gc', SLOT, JSON.stringify(spec)], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const waiters = [];
  child.stdout.setEncoding('utf8').on('data', (chunk) => {
    stdout += chunk;
    // Only a chunk that completes a line can complete the one awaited (a long result comes in many chunks).
    if (chunk.includes('\n')) for (const waiter of [...waiters]) waiter();
  });
  child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk.slice(-4000)));
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  exited.then(() => clearTimeout(timer));
  const describe = () =>
    `slot ${JSON.stringify(spec).slice(0, 200)}: ${stderr.trim().split('\n').slice(-5).join(' | ') || 'no output'}`;

  /** Resolves the first stdout line starting with `prefix` (its rest), rejects if the child exits first. */
  const line = (prefix) =>
    new Promise((resolve, reject) => {
      const check = () => {
        // Complete lines only: a long result arrives in several chunks.
        const found = stdout
          .slice(0, stdout.lastIndexOf('\n') + 1)
          .split('\n')
          .find((l) => l.startsWith(prefix));
        if (found === undefined) return false;
        waiters.splice(waiters.indexOf(check), 1);
        resolve(found.slice(prefix.length).trim());
        return true;
      };
      waiters.push(check);
      if (check()) return;
      exited.then(({ code, signal }) => {
        if (waiters.includes(check)) {
          waiters.splice(waiters.indexOf(check), 1);
          reject(new Error(`exited (code ${code}, signal ${signal}) before "${prefix}": ${describe()}`));
        }
      });
    });
  const result = line('RESULT').then((json) => JSON.parse(json));
  result.catch(() => undefined);
  return { child, line, result, exited };
}

export async function runSlot(spec) {
  return startSlot(spec).result;
}
