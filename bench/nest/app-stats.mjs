/**
 * Asks a bench app (bench/nest/app.mjs, forked with an IPC channel) for its figures so far: sales,
 * requests handled, CPU, heap allocated. Rejects if the app has exited, or exits before it answers,
 * instead of waiting for an answer that will never come.
 */
export function askStats(child) {
  return new Promise((resolve, reject) => {
    if (!child.connected) return reject(new Error(`app ${child.pid} exited (${child.exitCode ?? child.signalCode})`));
    const exited = (code, signal) => reject(new Error(`app ${child.pid} exited (${code ?? signal}) before answering`));
    child.once('exit', exited);
    child.once('message', (message) => {
      child.off('exit', exited);
      resolve(message);
    });
    child.send('stats');
  });
}
