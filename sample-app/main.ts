import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { Transport } from '@nestjs/microservices';
import { AppModule } from './app.module.js';
import { configFromEnv } from './config.js';

/**
 * Starts one instance of the sample app. PORT (default 3000), LOCK_BACKEND=redis + REDIS_URL to
 * share Redis, WAREHOUSE_PORT to take warehouse deliveries as TCP microservice messages.
 */
async function bootstrap(): Promise<void> {
  const config = configFromEnv();
  const app = await NestFactory.create(AppModule.register(config), { logger: ['error', 'warn'] });
  app.enableShutdownHooks();
  if (config.warehousePort !== undefined) {
    app.connectMicroservice(
      { transport: Transport.TCP, options: { host: '127.0.0.1', port: config.warehousePort } },
      { inheritAppConfig: true },
    );
    await app.startAllMicroservices();
  }
  await app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
  console.log(`listening on ${await app.getUrl()}`);
}

void bootstrap();
