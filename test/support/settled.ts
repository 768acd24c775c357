/** Whether `promise` has settled once the microtasks and I/O callbacks queued now have run (it is not awaited otherwise). */
export async function hasSettled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}
