const HANDLER_NAMES: Record<string, string> = {
  http: 'an HTTP route handler',
  rpc: 'a microservice handler',
  ws: 'a WebSocket gateway handler',
  graphql: 'a GraphQL resolver',
};

/** Every error and log text of the Nest layer, in one place. */
export const Messages = {
  moduleOptionsNotObject: (got: string) =>
    `DistributedLockModule options must be an object with a "backend", got ${got}`,
  storeName: (got: string) =>
    `DistributedLockModule: name must be a non-empty string of at most 200 characters, got ${got}`,
  storeNameMismatch: (name: string, got: string) =>
    `DistributedLockModule: the options factory returned name ${got} for the store registered as "${name}"; give the name in forRootAsync({ name }) only`,
  mapErrorsOption: (got: string) => `DistributedLockModule: mapErrors must be a boolean, got ${got}`,
  asyncOptionsSource: () => 'DistributedLockModule.forRootAsync() needs one of useFactory, useClass or useExisting',
  duplicateStore: (name: string) =>
    `Two global DistributedLockModule stores are named "${name}"; give each forRoot() its own name (the unnamed one is "default")`,
  selfWait: (key: string, waitedMs: number) =>
    `A call has waited ${waitedMs} ms for lock "${key}", which its own call chain seems to hold (from acquire(), not entered with run()): it waits until waitMs runs out. Run nested calls inside withLock(), @Locked() or locks.run(lock, fn) to make them re-entrant`,
  forceReleased: (key: string, by: string, reason: string | undefined, evicted: number, actor?: string) =>
    `Lock "${key}" was force-released by ${actor === undefined ? '' : `${JSON.stringify(actor)} on `}${by}${reason ? ` (${JSON.stringify(reason)})` : ''}: ${evicted} holder(s) evicted`,
  lockLost: (key: string, fence: number | undefined, reason: string) =>
    `Lock "${key}" (fence ${fence ?? 'n/a'}) was lost while held: ${reason}`,
  releaseFailed: (key: string, fence: number | undefined, reason: string) =>
    `Lock "${key}" (fence ${fence ?? 'n/a'}) could not be released: ${reason}; the store keeps it until its lease lapses`,

  notAMethod: (where: string) => `@Locked() can only decorate methods; ${where} is not a method`,
  lockedArgs: (where: string) =>
    `@Locked() on ${where} takes (key?, leaseMs?, waitMs?) or ({ key?, leaseMs?, waitMs?, onBusy?, mode?, fair?, permits?, store?, minHoldMs?, maxHoldMs? }), not an options object followed by more arguments`,
  lockedStore: (where: string, got: string) =>
    `@Locked() on ${where}: store must be a non-empty string (a DistributedLockModule name), got ${got}`,
  lockedOnBusy: (where: string, got: string) => `@Locked() on ${where}: onBusy must be 'throw' or 'skip', got ${got}`,
  lockedOption: (where: string, message: string) => `@Locked() on ${where}: ${message}`,
  lockedNoDefaultKey: (where: string) =>
    `@Locked() on ${where}: no key given, and the default key 'ClassName.methodName' is ambiguous here (an anonymous class or a method named by a symbol); give a key`,
  jobArgs: (where: string, got: string) =>
    `@LockedJob() on ${where} takes an options object ({ key?, minHoldMs?, maxHoldMs?, leaseMs?, store? }), got ${got}`,

  keyType: (where: string, got: string) =>
    `@Locked() on ${where}: the key must be a non-empty string template or a function (or a non-empty list of them), got ${got}`,
  keyListEmpty: (where: string) => `@Locked() on ${where}: the key list must not be empty`,
  keyListElement: (where: string, index: number, got: string) =>
    `@Locked() on ${where}: key list element ${index} must be a non-empty string template or a function, got ${got}`,
  lockedPermitsWithKeyList: (where: string) =>
    `@Locked() on ${where}: permits (a semaphore) cannot be combined with a key list; a semaphore takes one key`,
  templateSyntax: (where: string, template: string, problem: string) =>
    `@Locked() on ${where}: bad key template ${JSON.stringify(template)}: ${problem}`,
  templateMissing: (where: string, template: string, name: string, got: string) =>
    `@Locked() on ${where}: key template ${JSON.stringify(template)} names {${name}}, which is ${got} in this call`,
  templateNotScalar: (where: string, template: string, name: string, got: string) =>
    `@Locked() on ${where}: key template ${JSON.stringify(template)} names {${name}}, which is ${got}; only strings, numbers, bigints and booleans can be part of a key`,
  templatePartNotInContext: (where: string, template: string, name: string, kind: string | undefined) =>
    kind === undefined
      ? `@Locked() on ${where}: key template ${JSON.stringify(template)} names {${name}}, a part of a request or message, but ${where} is not a handler Nest calls (a route, a message or GraphQL handler); name the key by the method's arguments, e.g. {0}`
      : `@Locked() on ${where}: key template ${JSON.stringify(template)} names {${name}}, which ${HANDLER_NAMES[kind] ?? `a ${kind} handler`} does not have (HTTP routes: params, query, body, headers; microservice and WebSocket messages: data; GraphQL: args)`,
  templatePartNotCarried: (where: string, template: string, name: string, toAdd: string) =>
    `@Locked() on ${where}: key template ${JSON.stringify(template)} names {${name}}, which no parameter of ${where} carries: add ${toAdd}`,
  streamFromMethod: (where: string) =>
    `@Locked() on ${where} (not a handler Nest called) returned an Observable or stream: its lock was released when the method returned, before the stream ran. Return a promise, or put @Locked() on the handler that returns the stream. Logged once per method`,
  keyFunctionResult: (where: string, got: string) =>
    `@Locked() on ${where}: the key function must return a non-empty string, got ${got}`,

  lostAnswered: (message: string) =>
    `${message}; the request it guarded was refused (answered as a conflict, code LOCK_LOST)`,

  moduleNotImported: () =>
    `This application has @Locked() or @LockedJob() methods but does not import DistributedLockModule: add DistributedLockModule.forRoot({ backend: ... }) (or forRootAsync) to the imports of the application module (in a test: DistributedLockModule.forRoot({ backend: { type: 'memory' } }))`,
  noModule: (where: string, store: string) =>
    store === 'default'
      ? `@Locked() on ${where}: no DistributedLockModule is running. Import DistributedLockModule.forRoot(...) (or forRootAsync) in the application module (in a unit test: DistributedLockModule.forRoot({ backend: { type: 'memory' } }))`
      : `@Locked() on ${where}: no DistributedLockModule named "${store}" is running. Import DistributedLockModule.forRoot({ name: '${store}', ... })`,
  ambiguousModule: (where: string, store: string) =>
    `@Locked() on ${where}: several DistributedLockModule stores named "${store}" are running and this object is not a provider or controller of any of them; call the method on the instance Nest created`,
  ambiguousProvider: (where: string, store: string) =>
    `@Locked() on ${where}: more than one DistributedLockModule store named "${store}" is visible from this provider's module; import only one`,
} as const;
