import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module.js';
import { configFromEnv } from './config.js';

/** Starts one instance of the sample app. PORT (default 3000), LOCK_BACKEND=redis + REDIS_URL to share Redis. */
async function bootstrap(): Promise<void> {
  const app = await NestFactory.create(AppModule.register(configFromEnv()), { logger: ['error', 'warn'] });
  app.enableShutdownHooks();
  await app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
  console.log(`listening on ${await app.getUrl()}`);
}

void bootstrap();
