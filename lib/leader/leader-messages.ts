/** Every error and log text of leader election, in one place. */
export const LeaderMessages = {
  name: (got: string) => `Leadership name must be a non-empty string, got ${got}`,
  task: (name: string, got: string) => `lead("${name}") needs a task function, got ${got}`,
  options: (name: string, got: string) => `lead("${name}") options must be an object, got ${got}`,
  afterTask: (name: string, got: string) => `lead("${name}"): afterTask must be 'campaign' or 'stop', got ${got}`,
  alreadyCampaigning: (name: string) =>
    `This instance already campaigns for leadership "${name}" (lead() was called for it and not stopped, or @OnLeadership / @LeaderOnly use it); stop that campaign first, or share its leadership`,
  unfenced: (backend: string) =>
    `Leader election is refused on the ${backend} backend: it does not declare fencing tokens (capabilities.fenced), so successive leaders would get no increasing term, and a leader paused past its lease (or a store restarted without persistence) could act next to its successor with nothing to tell them apart. Use ZooKeeper or etcd (consensus and honest terms), or Redis, PostgreSQL or MySQL, for leader election`,
  closed: () => 'The lock service is shut down: no campaign can start',
  taskFailed: (name: string, message: string) =>
    `The leader task of "${name}" failed (this instance resigns and campaigns again): ${message}`,
  storeFailed: (name: string, message: string, retryInMs: number) =>
    `Campaign for leadership "${name}" could not reach the store (trying again in ${retryInMs} ms): ${message}`,
  decoratorNotAMethod: (decorator: string, where: string) =>
    `${decorator} can only decorate methods; ${where} is not a method`,
  decoratorName: (decorator: string, where: string, got: string) =>
    `${decorator} on ${where}: the leadership name must be a non-empty string, got ${got}`,
  decoratorStore: (decorator: string, where: string, got: string) =>
    `${decorator} on ${where}: store must be a non-empty string (a DistributedLockModule name), got ${got}`,
  noLeaderService: (where: string, store: string) =>
    `@LeaderOnly() on ${where}: no leader election runs for the store "${store}" (is DistributedLockModule imported in this application?)`,
} as const;
