/** Where a guarded value lives: a row in PostgreSQL (through pg, or TypeORM) or MariaDB/MySQL, or a Redis string. */
export interface ResourceAddress {
  readonly kind: 'postgres' | 'typeorm-postgres' | 'mysql' | 'redis';
  readonly url: string;
}

/** The package's guards (the source in jest, the built copy in a child process). */
export interface GuardsModule {
  readonly SqlFenceGuard: typeof import('../../lib/index.js').SqlFenceGuard;
  readonly RedisFenceGuard: typeof import('../../lib/index.js').RedisFenceGuard;
}

export interface GuardedResource {
  /** Writes through the guard; rejects with StaleFenceError (nothing written) when `fence` is below the highest accepted for `name`. */
  write(name: string, value: string, fence: number): Promise<void>;
  read(name: string): Promise<string | undefined>;
  close(): Promise<void>;
}

export declare const VALUES_TABLE: string;
export declare function openGuardedResource(address: ResourceAddress, lib: GuardsModule): Promise<GuardedResource>;
export declare function prepareGuardedResource(address: ResourceAddress, lib: GuardsModule): Promise<void>;
