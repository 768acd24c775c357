import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Logger, type INestApplication, type LoggerService } from '@nestjs/common';
import { ApolloDriver, type ApolloDriverConfig } from '@nestjs/apollo';
import { Args, Field, GraphQLModule, Mutation, ObjectType, Query, Resolver } from '@nestjs/graphql';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { DistributedLockModule, Locked, LockService } from '../../lib/index.js';
import { deferred } from './nest-test-kit.js';

@ObjectType()
class Reservation {
  @Field()
  sku!: string;

  @Field({ nullable: true })
  key?: string;
}

@Resolver(() => Reservation)
class StockResolver {
  gate = deferred();
  entered = deferred();

  constructor(private readonly locks: LockService) {}

  @Query(() => String)
  ping(): string {
    return 'pong';
  }

  @Mutation(() => Reservation)
  @Locked({ key: 'gql:{args.sku}', waitMs: 0 })
  async reserve(@Args('sku') sku: string): Promise<Reservation> {
    this.entered.resolve();
    await this.gate.promise;
    return { sku, key: this.locks.current()?.key };
  }
}

class ErrorLog implements LoggerService {
  readonly errors: unknown[] = [];
  log(): void {}
  warn(): void {}
  error(message: unknown, ...rest: unknown[]): void {
    if (process.env.NEST_LOG) console.error(message, ...rest);
    this.errors.push(message);
  }
}

describe('@Locked on a GraphQL resolver', () => {
  const log = new ErrorLog();
  let app: INestApplication;

  beforeAll(async () => {
    Logger.overrideLogger(log);
    const moduleRef = await Test.createTestingModule({
      imports: [
        DistributedLockModule.forRoot({ backend: { type: 'memory' } }),
        GraphQLModule.forRoot<ApolloDriverConfig>({ driver: ApolloDriver, autoSchemaFile: true }),
      ],
      providers: [StockResolver],
    }).compile();
    app = moduleRef.createNestApplication({ logger: log });
    await app.init();
  });
  afterAll(() => app.close());

  const reserve = (sku: string) =>
    request(app.getHttpServer())
      .post('/graphql')
      .send({ query: 'mutation($sku: String!) { reserve(sku: $sku) { sku key } }', variables: { sku } });

  it('locks by the arguments ({args.x}); a busy lock is an error whose extensions.code is LOCK_BUSY, not logged', async () => {
    const resolver = app.get(StockResolver);
    const first = reserve('A').then((response) => response.body);
    await resolver.entered.promise;
    const busy = (await reserve('A')).body as { errors: { message: string; extensions: Record<string, unknown> }[] };
    expect(busy.errors[0].extensions).toMatchObject({ code: 'LOCK_BUSY', key: 'gql:A' });
    expect(busy.errors[0].message).toContain('busy');
    resolver.gate.resolve();
    await expect(first).resolves.toEqual({ data: { reserve: { sku: 'A', key: 'gql:A' } } });
    expect(log.errors).toEqual([]);
  });
});
