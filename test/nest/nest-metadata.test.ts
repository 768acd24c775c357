import { describe, expect, it } from '@jest/globals';
import { Body, Catch, Controller, Get, Headers, Param, Query, Req, Sse } from '@nestjs/common';
import { Args, Mutation, Query as GqlQuery, ResolveField, Resolver } from '@nestjs/graphql';
import { Ctx, EventPattern, MessagePattern, Payload } from '@nestjs/microservices';
import { ConnectedSocket, MessageBody, SubscribeMessage } from '@nestjs/websockets';
import { caughtTypesOf, decoratedParams, handlerKindOf } from '../../lib/nest/nest-metadata.js';

/**
 * What the library reads of Nest's own metadata, pinned on the installed Nest (the packaging test
 * pins the same through a real application on Nest 11): a change in Nest fails here first.
 */
@Controller()
class Http {
  @Get(':id')
  route(
    @Param('id') _id: string,
    @Param() _params: object,
    @Query('q') _q: string,
    @Body() _body: object,
    @Headers('X-Tenant') _tenant: string,
    @Req() _request: object,
  ) {}

  @Sse('events')
  events() {}
}

@Controller()
class Messages {
  @MessagePattern('a')
  request(@Payload() _data: object, @Ctx() _context: object) {}

  @EventPattern('b')
  event(@Payload('sku') _sku: string) {}
}

class Gateway {
  @SubscribeMessage('c')
  message(@ConnectedSocket() _socket: object, @MessageBody() _body: object) {}
}

@Resolver()
class Resolvers {
  @GqlQuery(() => String)
  read(@Args('id') _id: string) {}

  @Mutation(() => String)
  write(@Args() _args: object) {}

  @ResolveField(() => String)
  field() {}
}

class Plain {
  method() {}
}

describe("Nest's metadata as @Locked() reads it", () => {
  it('the context a method handles: routes and SSE, message and event patterns, gateway messages, GraphQL queries, mutations and fields', () => {
    expect([Http.prototype.route, Http.prototype.events].map(handlerKindOf)).toEqual(['http', 'http']);
    expect([Messages.prototype.request, Messages.prototype.event].map(handlerKindOf)).toEqual(['rpc', 'rpc']);
    expect(handlerKindOf(Gateway.prototype.message)).toBe('ws');
    expect([Resolvers.prototype.read, Resolvers.prototype.write, Resolvers.prototype.field].map(handlerKindOf)).toEqual(
      ['graphql', 'graphql', 'graphql'],
    );
    expect(handlerKindOf(Plain.prototype.method)).toBeUndefined();
  });

  it('which argument each parameter decorator fills, and with what: request 0, payload 3, query 4, params 5, headers 6', () => {
    const sorted = (type: Function, name: string) => decoratedParams(type, name)?.sort((a, b) => a.index - b.index);
    expect(sorted(Http, 'route')).toEqual([
      { index: 0, type: 5, data: 'id' },
      { index: 1, type: 5, data: undefined },
      { index: 2, type: 4, data: 'q' },
      { index: 3, type: 3, data: undefined },
      { index: 4, type: 6, data: 'X-Tenant' },
      { index: 5, type: 0, data: undefined },
    ]);
    expect(sorted(Messages, 'request')).toEqual([
      { index: 0, type: 3, data: undefined },
      { index: 1, type: 6, data: undefined },
    ]);
    expect(sorted(Messages, 'event')).toEqual([{ index: 0, type: 3, data: 'sku' }]);
    expect(sorted(Gateway, 'message')).toEqual([
      { index: 0, type: 0, data: undefined },
      { index: 1, type: 3, data: undefined },
    ]);
    expect(sorted(Resolvers, 'read')).toEqual([{ index: 0, type: 3, data: 'id' }]);
    expect(sorted(Resolvers, 'write')).toEqual([{ index: 0, type: 3, data: undefined }]);
    expect(decoratedParams(Http, 'events')).toBeUndefined();
  });

  it('what a filter catches: the types given to @Catch(), none for a catch-all', () => {
    class A extends Error {}
    class B extends Error {}
    @Catch(A, B)
    class Some {
      catch() {}
    }
    @Catch()
    class Everything {
      catch() {}
    }
    expect(caughtTypesOf(new Some())).toEqual([A, B]);
    expect(caughtTypesOf(new Everything())).toEqual([]);
  });
});
