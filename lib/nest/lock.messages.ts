/** Every error and log text of the Nest layer, in one place. */
export const Messages = {
  moduleOptionsNotObject: (got: string) => `DistributedLockModule options must be an object with a "backend", got ${got}`,
  lockLost: (key: string, fence: number | undefined, reason: string) =>
    `Lock "${key}" (fence ${fence ?? 'n/a'}) was lost while held: ${reason}`,

  notAMethod: (where: string) => `@Locked() can only decorate methods; ${where} is not a method`,
  lockedArgs: (where: string) =>
    `@Locked() on ${where} takes (key, leaseMs?, waitMs?) or ({ key, leaseMs?, waitMs?, onBusy?, mode?, fair?, permits? }), not an options object followed by more arguments`,
  lockedUnknownOption: (where: string, name: string) =>
    `@Locked() on ${where}: unknown option "${name}" (expected key, leaseMs, waitMs, onBusy, mode, fair, permits)`,
  lockedOnBusy: (where: string, got: string) => `@Locked() on ${where}: onBusy must be 'throw' or 'skip', got ${got}`,
  lockedOption: (where: string, message: string) => `@Locked() on ${where}: ${message}`,

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
  templateNoRequest: (where: string, template: string, name: string) =>
    `@Locked() on ${where}: key template ${JSON.stringify(template)} names {${name}}, a part of the HTTP request, but ${where} was not called as an HTTP route handler`,
  keyFunctionResult: (where: string, got: string) =>
    `@Locked() on ${where}: the key function must return a non-empty string, got ${got}`,

  noModule: (where: string) =>
    `@Locked() on ${where}: no DistributedLockModule is running. Import DistributedLockModule.forRoot(...) (or forRootAsync) in the application module`,
  ambiguousModule: (where: string) =>
    `@Locked() on ${where}: several DistributedLockModule instances are running and this object is not a provider or controller of any of them; call the method on the instance Nest created`,
  ambiguousProvider: (where: string) =>
    `@Locked() on ${where}: more than one DistributedLockModule is visible from this provider's module; import only one`,
} as const;
